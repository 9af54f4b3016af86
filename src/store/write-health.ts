/**
 * Whether the store can write. A full disk (or a failing one) refuses every write while reads go
 * on: the service keeps serving, counts wait in memory, and what needs a write to answer is
 * answered 503 with Retry-After. The store names the real error once when writes start failing
 * and once when they work again (WriteHealth), never once per write.
 */

/** The store cannot write (the disk is full, or failing): a condition of the machine, not a bug. */
export class StoreWriteError extends Error {
  override name = 'StoreWriteError';
  /** The backend's own error (SQLite's `database or disk is full`, PostgreSQL's 53100…). */
  override readonly cause: unknown;
  constructor(message: string, cause: unknown) {
    super(message);
    this.cause = cause;
  }
}

/** Writes failing since `since` (ms since the epoch) with `error`, the backend's message. */
export interface WriteProblem {
  since: number;
  error: string;
}

/** Told when writes start failing (a problem) and when they work again (null). */
export type WriteProblemListener = (problem: WriteProblem | null) => void;

/**
 * SQLite's primary result codes that mean the disk refuses writes: SQLITE_IOERR (10, any
 * extended code), SQLITE_FULL (13). node:sqlite puts the code on the error as `errcode`.
 */
const SQLITE_DISK_CODES = new Set([10, 13]);

/** Whether `err` is SQLite saying the disk refuses writes (full, or an I/O error). */
export function isSqliteDiskError(err: unknown): boolean {
  const code = (err as { errcode?: unknown } | null)?.errcode;
  return typeof code === 'number' && SQLITE_DISK_CODES.has(code & 0xff);
}

/**
 * A full disk refuses big writes and may still take small ones: writes count as working again
 * only once one goes through WRITES_CLEAR_AFTER_MS after the last failure, so an outage is told
 * once, not once per small write that slipped through.
 */
export const WRITES_CLEAR_AFTER_MS = 30_000;

/** The state of the store's writes, and who hears of its changes. */
export class WriteHealth {
  #problem: WriteProblem | null = null;
  #lastFailure = 0;
  readonly #listeners = new Set<WriteProblemListener>();

  get problem(): WriteProblem | null {
    return this.#problem;
  }

  /** Hears every change from now on (not the current state). Returns the way to stop hearing. */
  watch(listener: WriteProblemListener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** A write failed with a disk error at `nowMs`: listeners hear of it if writes worked until now. */
  failed(error: string, nowMs: number): void {
    this.#lastFailure = nowMs;
    if (this.#problem) {
      this.#problem.error = error;
      return;
    }
    this.#problem = { since: nowMs, error };
    for (const l of this.#listeners) l(this.#problem);
  }

  /**
   * A write went through at `nowMs`: listeners hear that writes work again if they were failing
   * and the last failure is WRITES_CLEAR_AFTER_MS old.
   */
  succeeded(nowMs: number): void {
    if (!this.#problem || nowMs - this.#lastFailure < WRITES_CLEAR_AFTER_MS) return;
    this.#problem = null;
    for (const l of this.#listeners) l(null);
  }
}
