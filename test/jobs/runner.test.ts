import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { type JobLog, JobRunner, type Timers } from '../../src/jobs/runner.ts';
import { ManualClock } from '../clock.ts';

/** Timers driven by a ManualClock: advance() moves the clock and fires what fell due, in order. */
class ManualTimers implements Timers {
  readonly #clock: ManualClock;
  #pending: { at: number; seq: number; fn: () => void }[] = [];
  #seq = 0;
  constructor(clock: ManualClock) {
    this.#clock = clock;
  }
  setTimeout(fn: () => void, ms: number): unknown {
    const t = { at: this.#clock.now() + ms, seq: this.#seq++, fn };
    this.#pending.push(t);
    return t;
  }
  clearTimeout(handle: unknown): void {
    this.#pending = this.#pending.filter((t) => t !== handle);
  }
  get pending(): number {
    return this.#pending.length;
  }
  /** Moves time by `ms`, firing each timer at its instant and letting its run settle. */
  async advance(ms: number): Promise<void> {
    const end = this.#clock.now() + ms;
    await settle();
    for (;;) {
      this.#pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.#pending[0];
      if (!next || next.at > end) break;
      this.#pending.shift();
      if (next.at > this.#clock.now()) this.#clock.set(next.at);
      next.fn();
      await settle();
    }
    this.#clock.set(end);
  }
}

/** Lets promise chains run (several turns of microtasks). */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}

function recordingLog() {
  const lines: { level: 'warn' | 'info'; msg: string; job: unknown }[] = [];
  const log: JobLog = {
    warn: (obj, msg) => lines.push({ level: 'warn', msg, job: (obj as { job?: unknown }).job }),
    info: (obj, msg) => lines.push({ level: 'info', msg, job: (obj as { job?: unknown }).job }),
  };
  return { lines, log };
}

function setup(start = '2026-11-22T12:00:00.000Z') {
  const clock = new ManualClock(start);
  const timers = new ManualTimers(clock);
  const { lines, log } = recordingLog();
  const ran: { job: string; seconds: number; lag: number; failed: boolean }[] = [];
  const runner = new JobRunner({
    clock,
    timers,
    log,
    metrics: { ran: (job, seconds, lag, failed) => ran.push({ job, seconds, lag, failed }) },
    yieldToLoop: () => Promise.resolve(),
  });
  return { clock, timers, lines, runner, ran };
}

describe('JobRunner', () => {
  test('default: a job runs at start, then every interval', async () => {
    const { clock, timers, runner } = setup();
    const at: number[] = [];
    runner.add({ name: 'a', everyMs: 1_000, run: () => void at.push(clock.now()) });
    runner.start();
    const t0 = clock.now();
    await timers.advance(3_500);
    assert.deepEqual(at, [t0, t0 + 1_000, t0 + 2_000, t0 + 3_000]);
    await runner.stop();
  });

  test('behavior: runAtStart false waits one interval; aligned runs fall on multiples of the interval', async () => {
    const { clock, timers, runner } = setup('2026-11-22T12:00:01.300Z');
    const late: number[] = [];
    const aligned: number[] = [];
    runner.add({ name: 'late', everyMs: 1_000, runAtStart: false, run: () => void late.push(clock.now()) });
    runner.add({
      name: 'tick',
      everyMs: 5_000,
      aligned: true,
      runAtStart: false,
      run: () => void aligned.push(clock.now()),
    });
    const t0 = clock.now();
    runner.start();
    await timers.advance(10_000);
    assert.equal(late[0], t0 + 1_000);
    assert.equal(late.length, 10);
    assert.deepEqual(
      aligned.map((t) => new Date(t).toISOString()),
      ['2026-11-22T12:00:05.000Z', '2026-11-22T12:00:10.000Z'],
    );
    await runner.stop();
  });

  test('behavior: runs of a job never overlap; a run longer than the interval delays the next, whose lag is recorded', async () => {
    const { clock, timers, runner, ran } = setup();
    let release: (() => void) | null = null;
    let active = 0;
    let most = 0;
    const at: number[] = [];
    runner.add({
      name: 'slow',
      everyMs: 1_000,
      run: async () => {
        at.push(clock.now());
        active++;
        most = Math.max(most, active);
        if (at.length === 1) await new Promise<void>((r) => (release = r));
        active--;
      },
    });
    const t0 = clock.now();
    runner.start();
    await timers.advance(2_500);
    assert.equal(at.length, 1, 'the first run holds on: no second run meanwhile');
    release!();
    await settle();
    // the run ended at t0 + 2,500: the next is due at once (its due time passed)
    await timers.advance(0);
    assert.equal(at.length, 2);
    assert.equal(at[1], t0 + 2_500);
    assert.equal(most, 1);
    assert.equal(ran[0]!.seconds, 2.5);
    assert.equal(
      ran[1]!.lag,
      0.5,
      'due at t0 + 2,000 (the last instant passed; t0 + 1,000 is skipped), started at t0 + 2,500',
    );
    await runner.stop();
  });

  test('behavior: a failing job backs off 1, 2, 4 ... up to the maximum, then its interval again once it succeeds', async () => {
    const { clock, timers, runner } = setup();
    const at: number[] = [];
    let failUntil = 5;
    runner.add({
      name: 'flaky',
      everyMs: 1_000,
      backoff: { initialMs: 10_000, maxMs: 40_000 },
      run: () => {
        at.push(clock.now());
        if (at.length <= failUntil) throw new Error(`failure ${at.length}`);
      },
    });
    const t0 = clock.now();
    runner.start();
    await timers.advance(200_000);
    const gaps = at.slice(1, 7).map((t, i) => t - at[i]!);
    assert.deepEqual(gaps, [10_000, 20_000, 40_000, 40_000, 40_000, 1_000]);
    assert.equal(at[0], t0);
    const s = runner.status()[0]!;
    assert.equal(s.failures, 5);
    assert.equal(s.consecutiveFailures, 0);
    assert.equal(s.lastError, null);
    failUntil = 0;
    await runner.stop();
  });

  test('behavior: a failure is logged once until the job recovers, then its recovery once', async () => {
    const { timers, lines, runner, ran } = setup();
    let n = 0;
    runner.add({
      name: 'source',
      everyMs: 1_000,
      failureMessage: 'source failed',
      recoveredMessage: 'source read again',
      run: () => {
        n++;
        if (n <= 3 || n === 6) throw new Error('unreachable');
      },
    });
    runner.start();
    await timers.advance(6_500);
    assert.equal(n, 7);
    assert.deepEqual(
      lines.map((l) => `${l.level} ${l.msg} ${l.job}`),
      [
        'warn source failed source',
        'info source read again source',
        'warn source failed source',
        'info source read again source',
      ],
    );
    assert.deepEqual(
      ran.map((r) => r.failed),
      [true, true, true, false, false, true, false],
    );
    assert.equal(runner.status()[0]!.failures, 4);
    await runner.stop();
  });

  test('behavior: stop aborts the run under way, waits for it, and no run starts after', async () => {
    const { timers, runner, lines } = setup();
    let runs = 0;
    let sawAbort = false;
    let entered!: () => void;
    const inRun = new Promise<void>((r) => (entered = r));
    runner.add({
      name: 'long',
      everyMs: 1_000,
      run: async ({ signal }) => {
        runs++;
        entered();
        await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve()));
        sawAbort = signal.aborted;
        throw signal.reason;
      },
    });
    runner.start();
    await timers.advance(0);
    await inRun;
    await runner.stop();
    assert.equal(sawAbort, true);
    assert.equal(timers.pending, 0);
    await timers.advance(10_000);
    assert.equal(runs, 1);
    assert.deepEqual(lines, [], 'a run abandoned by stop is not a failure');
    assert.equal(runner.status()[0]!.nextAt, null);
  });

  test('behavior: runNow joins the run under way and the schedule goes on from it', async () => {
    const { clock, timers, runner } = setup();
    const at: number[] = [];
    runner.add({ name: 'a', everyMs: 10_000, run: () => void at.push(clock.now()) });
    const t0 = clock.now();
    runner.start();
    await timers.advance(4_000);
    await runner.runNow('a');
    await timers.advance(10_000);
    assert.deepEqual(at, [t0, t0 + 4_000, t0 + 14_000]);
    await runner.stop();
  });

  test('behavior: pause yields once a slice of work has passed, and a run that held the loop is reported', async () => {
    const clock = new ManualClock();
    const timers = new ManualTimers(clock);
    let perf = 0;
    let yields = 0;
    const runner = new JobRunner({
      clock,
      timers,
      log: recordingLog().log,
      now: () => perf,
      yieldToLoop: async () => {
        yields++;
      },
    });
    runner.add({
      name: 'sliced',
      everyMs: 1_000,
      run: async ({ pause }) => {
        for (let i = 0; i < 10; i++) {
          perf += 2; // 2 ms of work per piece
          await pause();
        }
      },
    });
    runner.start();
    await timers.advance(0);
    assert.equal(yields, 3, '20 ms of work in 2 ms pieces: a yield after every 6 ms (each ≥ 5 ms)');
    assert.equal(runner.heldLoopWithin(1_000), false);
    runner.add({
      name: 'blocking',
      everyMs: 1_000,
      run: () => {
        perf += 50;
      },
    });
    await timers.advance(0);
    assert.equal(runner.heldLoopWithin(1_000), true);
    perf += 2_000;
    assert.equal(runner.heldLoopWithin(1_000), false);
    // A run waiting on a worker thread or the network does not hold the loop, however long.
    runner.add({
      name: 'worker',
      everyMs: 1_000,
      offLoop: true,
      run: async () => {
        perf += 50;
      },
    });
    await timers.advance(0);
    assert.equal(runner.heldLoopWithin(1_000), false);
    await runner.stop();
  });

  test('error: a second job of the same name, or a non-positive interval', () => {
    const { runner } = setup();
    runner.add({ name: 'a', everyMs: 1, run: () => {} });
    assert.throws(() => runner.add({ name: 'a', everyMs: 1, run: () => {} }), /registered already/);
    assert.throws(() => runner.add({ name: 'b', everyMs: 0, run: () => {} }), /positive/);
  });
});
