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

/**
 * How long a stopping worker gets to end its batch, close its store and exit before it is
 * terminated (ms). A batch takes tens of ms; building the simulation at the worker's start
 * takes seconds on a loaded machine and is not interruptible, so the worker is terminated
 * then. Terminating it loses nothing: a write transaction it had open is rolled back, and the
 * history's checkpoint only moves after what it covers is written (appends are idempotent),
 * so the next start writes that part again.
 */
export const HISTORY_STOP_MS = 2_000;

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

  #stopping: Promise<void> | null = null;

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

  /**
   * Writes what is missing up to the last whole hour before `nowMs`. Aborting `signal` stops the
   * worker (see stop): the advance then resolves with what was written so far.
   */
  advance(nowMs: number, signal?: AbortSignal): Promise<WrittenHistory> {
    if (this.#exited) return Promise.reject(this.#exited);
    if (this.#stopping) return Promise.reject(new Error('the history worker is stopping'));
    const id = this.#next++;
    const written = new Promise<WrittenHistory>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#worker.postMessage({ type: 'advance', id, nowMs } satisfies ToHistoryWorker);
    });
    if (!signal) return written;
    const onAbort = () => void this.stop();
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    return written.finally(() => signal.removeEventListener('abort', onAbort));
  }

  /**
   * Stops between two batches (the step in progress ends early), closes the worker's store, ends
   * it; terminated if it has not ended within HISTORY_STOP_MS. Resolves once it has exited.
   */
  stop(): Promise<void> {
    this.#stopping ??= (async () => {
      if (!this.#exited) this.#worker.postMessage({ type: 'stop' } satisfies ToHistoryWorker);
      const timer = setTimeout(() => void this.#worker.terminate(), HISTORY_STOP_MS);
      await this.#stopped;
      clearTimeout(timer);
    })();
    return this.#stopping;
  }
}
