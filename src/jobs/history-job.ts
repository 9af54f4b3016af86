import { Worker } from 'node:worker_threads';
import type { WrittenHistory } from '../ingest/sandbox/history.ts';

/** What the history worker is started with (structured-cloned). */
export interface HistoryWorkerData {
  dataDir: string;
  databaseUrl: string | null;
  profile: 'default' | 'large';
  seed: number;
  days: number;
  hourlyDays?: number;
  retentionDays: number | null;
}

export type ToHistoryWorker = { type: 'advance'; id: number; nowMs: number } | { type: 'stop' };
type FromHistoryWorker =
  | { type: 'ready' }
  | { type: 'advanced'; id: number; written: WrittenHistory }
  | { type: 'failed'; id: number; message: string }
  | { type: 'backfilled' }
  | { type: 'stopped' };

/**
 * The sandbox history feed of one dataset, run in a worker thread with its own store connection
 * (src/jobs/history-worker.ts): `advance` writes what is missing up to the last whole hour, off
 * the event loop. One advance at a time (the job runner never overlaps runs).
 */
export class HistoryWorker {
  readonly #worker: Worker;
  readonly #pending = new Map<number, { resolve(w: WrittenHistory): void; reject(e: Error): void }>();
  #next = 0;
  #exited: Error | null = null;
  readonly #stopped: Promise<void>;

  constructor(data: HistoryWorkerData, onBackfilled?: () => void) {
    this.#worker = new Worker(new URL('./history-worker.ts', import.meta.url), { workerData: data });
    this.#worker.unref();
    this.#stopped = new Promise<void>((resolve) => {
      this.#worker.once('exit', (code) => {
        this.#exited = new Error(`the history worker exited (${code})`);
        for (const p of this.#pending.values()) p.reject(this.#exited);
        this.#pending.clear();
        resolve();
      });
    });
    this.#worker.on('error', (err) => {
      this.#exited = err;
      for (const p of this.#pending.values()) p.reject(err);
      this.#pending.clear();
    });
    this.#worker.on('message', (m: FromHistoryWorker) => {
      if (m.type === 'backfilled') onBackfilled?.();
      else if (m.type === 'advanced' || m.type === 'failed') {
        const p = this.#pending.get(m.id);
        this.#pending.delete(m.id);
        if (m.type === 'advanced') p?.resolve(m.written);
        else p?.reject(new Error(m.message));
      }
    });
  }

  advance(nowMs: number): Promise<WrittenHistory> {
    if (this.#exited) return Promise.reject(this.#exited);
    const id = this.#next++;
    return new Promise<WrittenHistory>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ type: 'advance', id, nowMs } satisfies ToHistoryWorker);
    });
  }

  /** Stops between two batches (the step in progress ends early), closes the worker's store, ends it. */
  async stop(): Promise<void> {
    if (!this.#exited) this.#worker.postMessage({ type: 'stop' } satisfies ToHistoryWorker);
    const timer = setTimeout(() => void this.#worker.terminate(), 10_000);
    await this.#stopped;
    clearTimeout(timer);
  }
}
