/** Where time comes from. Injected everywhere time matters, so tests move time instead of sleeping. */
export interface Clock {
  /** Epoch milliseconds, fractions included; never decreases. */
  now(): number;
}

/** How far the monotonic reading may drift from the wall clock before it is corrected, in ms. */
const MAX_DRIFT_MS = 1000;
/** The clock's speed while it lets a wall clock that stepped back catch up. */
const SLEW_SPEED = 0.9;

/**
 * The system clock: the process's monotonic high-resolution clock (`performance.now()`,
 * microseconds and finer) placed on the epoch, never decreasing. The sliding window compares
 * these readings: with whole milliseconds (Date.now()) a request at 1000.9 and one at 2000.0
 * read 1000 and 2000, a full window apart, though only 999.1 ms passed, so rate + 1 requests
 * could be admitted in under 1,000 ms; being monotonic it also ignores small steps of the system
 * clock, which would shorten every open window at once.
 *
 * It still tells the wall time, which quotas (UTC days and months), key dates and oracle ages
 * need: at most once a second it is compared with Date.now(). When the wall clock is ahead by
 * more than a second (the process started before NTP synced, a VM resumed from a pause), the
 * reading jumps to it: the one moment a window open then may be shorter than 1,000 ms. When the
 * wall clock is behind by more than a second (an operator or NTP set it back), the reading runs
 * at 0.9 of real time until the wall clock has caught up: it never goes back and never stands
 * still (a frozen reading would make every window last as long as the step, refusing every key
 * at its rate), and windows meanwhile last 1.11 s of real time, never less than one.
 * `wall` and `mono` are injectable for tests.
 */
export function systemClock(
  wall: () => number = Date.now,
  mono: () => number = () => performance.now(),
): Clock {
  // The reading is anchor + (monotonic time since the anchor) x speed, the anchor moved only at
  // the once-a-second checks: adding each call's increment to a running epoch-ms double would
  // lose up to 0.12 us per call to rounding and drift by milliseconds under load.
  let anchorMono = mono();
  let anchor = wall();
  let speed = 1;
  let last = anchor;
  const readingAt = (m: number) => anchor + (m - anchorMono) * speed;
  return {
    now() {
      const m = mono();
      if (m - anchorMono >= 1000) {
        // re-anchor at this instant, then compare with the wall clock
        anchor = readingAt(m);
        anchorMono = m;
        const ahead = wall() - anchor;
        if (ahead > MAX_DRIFT_MS) {
          anchor += ahead;
          speed = 1;
        } else if (ahead < -MAX_DRIFT_MS) speed = SLEW_SPEED;
        else if (ahead >= 0) speed = 1;
      }
      const t = readingAt(m);
      if (t > last) last = t;
      return last;
    },
  };
}
