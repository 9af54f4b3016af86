/**
 * The ingestion pass running in this process, as /health shows it: when it started, for how
 * long it has run, and whether that is longer than a pass is expected to take. A hung RPC
 * shows there at once, not only when the pass ends.
 */

import type { PassState, SourceProgress } from '../domain/pass-state.ts';

/**
 * A pass is expected to end within twice the interval between passes, and never counts as
 * overdue before this (a first pass of a chain reads its history).
 */
export const MIN_EXPECTED_PASS_MS = 60_000;

/** How long a pass may run before it is overdue, ms: twice `intervalMs`, at least MIN_EXPECTED_PASS_MS. */
export function expectedPassMs(intervalMs: number): number {
  return Math.max(MIN_EXPECTED_PASS_MS, 2 * intervalMs);
}

export class PassWatch {
  readonly #expectedMs: number;
  readonly #progress: (nowMs: number) => SourceProgress[];
  #startedAt: number | null = null;

  /** `progress`: the sources' parts of the pass under way (their log walks, their reads). */
  constructor(expectedMs: number, progress: (nowMs: number) => SourceProgress[] = () => []) {
    this.#expectedMs = expectedMs;
    this.#progress = progress;
  }

  /** A pass starts at `nowMs`. */
  started(nowMs: number): void {
    this.#startedAt = nowMs;
  }

  /** The pass ended (however). */
  ended(): void {
    this.#startedAt = null;
  }

  /** The pass running at `nowMs`, or null when none is. */
  state(nowMs: number): PassState | null {
    if (this.#startedAt === null) return null;
    const runningMs = Math.max(0, nowMs - this.#startedAt);
    return {
      startedAt: new Date(this.#startedAt).toISOString(),
      runningSeconds: Math.floor(runningMs / 1000),
      expectedSeconds: Math.round(this.#expectedMs / 1000),
      overdue: runningMs > this.#expectedMs,
      sources: this.#progress(nowMs),
    };
  }
}
