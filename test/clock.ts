import type { Clock } from '../src/domain/clock.ts';

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
