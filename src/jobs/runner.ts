import type { Clock } from '../domain/clock.ts';

/**
 * The job runner: owns the service's background work (the simulation step, history, ratings,
 * research digests, ingestion passes, the followers of the store). Each job is a function run
 * on a schedule, one run at a time; the runner starts and stops them, spaces their runs, backs
 * off after failures, logs a failing job once until it recovers, and records each run's time,
 * lag and outcome (JobMetrics; prom-client in src/jobs/metrics.ts).
 *
 * Registering a job:
 *
 *   runner.add({
 *     name: 'webhook-delivery',          // metrics label and log field
 *     everyMs: 1_000,                    // the next run is due this long after the last was due
 *     run: async ({ signal, pause }) => { ... await pause(); ... },
 *   });
 *
 * A run must not hold the event loop: heavy work runs in a worker thread (see
 * src/jobs/worker-job.ts), the rest calls `pause()` between small pieces of work, which yields
 * to I/O once SLICE_MS of work have passed since the last yield.
 */

/** The most a job's run works on the event loop between two yields (`pause()`), in ms. */
export const SLICE_MS = 5;

/** Timers the runner schedules with: Node's by default, a manual one in tests. */
export interface Timers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export const nodeTimers: Timers = {
  setTimeout(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  },
  clearTimeout(handle) {
    clearTimeout(handle as NodeJS.Timeout);
  },
};

/** What a run is handed. */
export interface JobContext {
  /** The instant (clock ms) the run was due. */
  dueAt: number;
  /** Aborted when the runner stops: a run checks it between pieces of work and returns early. */
  signal: AbortSignal;
  /**
   * Yields to the event loop if the run has worked SLICE_MS since its last yield (a no-op
   * otherwise, so it can be called after every small piece of work).
   */
  pause(): Promise<void>;
}

export interface JobDefinition {
  /** A short name: the metrics' `job` label and the logs' `job` field. */
  name: string;
  /**
   * How often, in clock ms. The next run is due `everyMs` after the previous one was due (or
   * after it ended, if it ran longer): runs of a job never overlap.
   */
  everyMs: number;
  /** Runs fall on multiples of `everyMs` since the epoch (every process steps at the same instants). */
  aligned?: boolean;
  /** Whether the first run is at start (default) or one interval later. */
  runAtStart?: boolean;
  /**
   * After a failure, the next run waits `initialMs`, doubled for each further failure in a row,
   * at most `maxMs` (clock ms); without it, a failed job runs again at its next interval.
   */
  backoff?: { initialMs: number; maxMs: number };
  /**
   * The run waits on work done off the event loop (a worker thread, the network): its time
   * between pauses is not the loop's, and the overload guard is not told the loop was held.
   */
  offLoop?: boolean;
  /** The work. A throw (or rejection) is a failure. */
  run(ctx: JobContext): Promise<unknown> | unknown;
  /** Logged (warn, once until a run succeeds) when a run fails; default `<name> failed`. */
  failureMessage?: string;
  /** Logged (info) at the first success after failures; default `<name> works again`. */
  recoveredMessage?: string;
}

/** A job's state, as /metrics and tests read it. */
export interface JobStatus {
  name: string;
  running: boolean;
  runs: number;
  failures: number;
  /** Failures in a row (0 once a run succeeded). */
  consecutiveFailures: number;
  lastError: string | null;
  /** When the next run is due (clock ms), null while stopped. */
  nextAt: number | null;
}

/** What the runner records per run; src/jobs/metrics.ts feeds prom-client. */
export interface JobMetrics {
  /** A run ended: its time on the clock (s), its lag (s after it was due) and whether it failed. */
  ran(job: string, seconds: number, lagSeconds: number, failed: boolean): void;
}

export interface JobLog {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface JobRunnerOptions {
  clock: Clock;
  log: JobLog;
  timers?: Timers;
  metrics?: JobMetrics;
  /** The time read for slicing (`pause()`); performance.now by default. */
  now?: () => number;
  /** How `pause()` yields; setImmediate by default. */
  yieldToLoop?: () => Promise<void>;
}

interface Job {
  def: JobDefinition;
  running: Promise<void> | null;
  timer: unknown;
  nextAt: number | null;
  runs: number;
  failures: number;
  consecutiveFailures: number;
  lastError: string | null;
}

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

export class JobRunner {
  readonly #o: JobRunnerOptions;
  readonly #timers: Timers;
  readonly #jobs = new Map<string, Job>();
  readonly #stop = new AbortController();
  #started = false;
  /** performance.now() when a job's run last held the loop longer than a slice, for the overload guard. */
  #heldAt = Number.NEGATIVE_INFINITY;

  constructor(options: JobRunnerOptions) {
    this.#o = options;
    this.#timers = options.timers ?? nodeTimers;
  }

  /** Registers a job; it starts with the runner (at once if the runner runs already). */
  add(def: JobDefinition): void {
    if (this.#jobs.has(def.name)) throw new Error(`a job named ${def.name} is registered already`);
    if (!(def.everyMs > 0)) throw new Error(`job ${def.name}: everyMs must be positive`);
    const job: Job = {
      def,
      running: null,
      timer: null,
      nextAt: null,
      runs: 0,
      failures: 0,
      consecutiveFailures: 0,
      lastError: null,
    };
    this.#jobs.set(def.name, job);
    if (this.#started) this.#startJob(job);
  }

  /** Starts every registered job. */
  start(): void {
    if (this.#started || this.#stop.signal.aborted) return;
    this.#started = true;
    for (const job of this.#jobs.values()) this.#startJob(job);
  }

  /**
   * Runs a job now, off its schedule (joins the run under way, if any); its schedule goes on
   * from its due time. Resolves once the run ended; never rejects (a failure is recorded).
   */
  runNow(name: string): Promise<void> {
    const job = this.#jobs.get(name);
    if (!job) throw new Error(`no job named ${name}`);
    if (this.#stop.signal.aborted) return Promise.resolve();
    return job.running ?? this.#run(job, this.#o.clock.now());
  }

  /** Stops: no run starts any more; runs under way are aborted (their signal) and awaited. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error('the job runner was stopped'));
    for (const job of this.#jobs.values()) {
      if (job.timer !== null) this.#timers.clearTimeout(job.timer);
      job.timer = null;
      job.nextAt = null;
    }
    await Promise.all([...this.#jobs.values()].map((j) => j.running));
  }

  status(): JobStatus[] {
    return [...this.#jobs.values()].map((j) => ({
      name: j.def.name,
      running: j.running !== null,
      runs: j.runs,
      failures: j.failures,
      consecutiveFailures: j.consecutiveFailures,
      lastError: j.lastError,
      nextAt: j.nextAt,
    }));
  }

  /**
   * Whether a job's run held the event loop for longer than a slice within the last `withinMs`
   * (performance.now() ms): an event-loop delay then is the service's own, and the overload
   * guard does not shed for it.
   */
  heldLoopWithin(withinMs: number): boolean {
    return this.#now() - this.#heldAt <= withinMs;
  }

  #now(): number {
    return this.#o.now ? this.#o.now() : performance.now();
  }

  #startJob(job: Job): void {
    const now = this.#o.clock.now();
    const { everyMs, aligned } = job.def;
    const first =
      job.def.runAtStart === false
        ? aligned
          ? Math.floor(now / everyMs) * everyMs + everyMs
          : now + everyMs
        : now;
    this.#schedule(job, first);
  }

  #schedule(job: Job, at: number): void {
    if (this.#stop.signal.aborted) return;
    if (job.timer !== null) this.#timers.clearTimeout(job.timer);
    job.nextAt = at;
    const wait = Math.max(0, at - this.#o.clock.now());
    job.timer = this.#timers.setTimeout(() => {
      job.timer = null;
      if (job.running) return; // runNow is under way: it schedules the next run when done
      // A clock that moved less than the timer waited (a test's manual clock): due now, so the
      // schedule does not drift ahead of the clock.
      void this.#run(job, Math.min(at, this.#o.clock.now()));
    }, wait);
  }

  /** The instant after `dueAt` when the next run is due (a failed run: after its backoff). */
  #next(job: Job, dueAt: number, failed: boolean): number {
    const now = this.#o.clock.now();
    const { everyMs, aligned, backoff } = job.def;
    if (failed && backoff) {
      const wait = Math.min(backoff.maxMs, backoff.initialMs * 2 ** (job.consecutiveFailures - 1));
      return now + wait;
    }
    if (aligned) return Math.max(Math.floor(now / everyMs) * everyMs + everyMs, dueAt + everyMs);
    // A run that outlasted its interval: the next is due at the last instant the schedule
    // passed meanwhile (runs late, by its lag; the instants missed before it are skipped).
    const next = dueAt + everyMs;
    return next >= now ? next : now - ((now - dueAt) % everyMs);
  }

  #run(job: Job, dueAt: number): Promise<void> {
    const { def } = job;
    const started = this.#o.clock.now();
    const startedPerf = this.#now();
    let sliceFrom = startedPerf;
    const signal = this.#stop.signal;
    const ctx: JobContext = {
      dueAt,
      signal,
      pause: async () => {
        const t = this.#now();
        if (t - sliceFrom < SLICE_MS) return;
        if (t - sliceFrom > 4 * SLICE_MS && !def.offLoop) this.#heldAt = t;
        await (this.#o.yieldToLoop ?? immediate)();
        sliceFrom = this.#now();
      },
    };
    const done = (async () => {
      // Settles after job.running is set, even when run() throws at once.
      await undefined;
      let failed = false;
      try {
        await def.run(ctx);
      } catch (err) {
        // A run abandoned because the runner stops is not a failure.
        if (!signal.aborted) {
          failed = true;
          job.failures++;
          job.consecutiveFailures++;
          job.lastError = err instanceof Error ? err.message : String(err);
          if (job.consecutiveFailures === 1)
            this.#o.log.warn({ err, job: def.name }, def.failureMessage ?? `${def.name} failed`);
        }
      }
      const end = this.#now();
      // The last piece of work, since the last yield (a run without pauses: the whole run).
      if (end - sliceFrom > 4 * SLICE_MS && !def.offLoop) this.#heldAt = end;
      job.runs++;
      if (!failed && job.consecutiveFailures > 0) {
        this.#o.log.info(
          { job: def.name, failures: job.consecutiveFailures },
          def.recoveredMessage ?? `${def.name} works again`,
        );
        job.consecutiveFailures = 0;
        job.lastError = null;
      }
      this.#o.metrics?.ran(
        def.name,
        (this.#o.clock.now() - started) / 1000,
        Math.max(0, started - dueAt) / 1000,
        failed,
      );
      job.running = null;
      if (this.#started) this.#schedule(job, this.#next(job, dueAt, failed));
    })();
    job.running = done;
    return done;
  }
}
