/** Where time comes from. Injected everywhere time matters, so tests move time instead of sleeping. */
export interface Clock {
  /** Epoch milliseconds; never decreases. */
  now(): number;
}

/** Wall-clock time made non-decreasing, so a step back of the system clock never reopens a window. */
export function systemClock(): Clock {
  let last = 0;
  return {
    now() {
      const t = Date.now();
      if (t > last) last = t;
      return last;
    },
  };
}

/** A clock tests set and advance by hand. */
export class ManualClock implements Clock {
  private t: number;
  constructor(start: number | string = '2026-11-22T12:00:00.000Z') {
    this.t = typeof start === 'string' ? Date.parse(start) : start;
  }
  now(): number {
    return this.t;
  }
  set(t: number | string): void {
    this.t = typeof t === 'string' ? Date.parse(t) : t;
  }
  advance(ms: number): void {
    this.t += ms;
  }
}
