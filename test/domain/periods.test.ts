import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import {
  DAY_MS,
  dayStartMs,
  monthOfDay,
  monthStartMs,
  nextUtcMidnight,
  nextUtcMonthStart,
  utcDay,
  utcMonth,
} from '../../src/domain/periods.ts';

const iso = (ms: number) => new Date(ms).toISOString();
/** Instants from 1970 to 2100, with fractions of a millisecond. */
const instant = fc
  .tuple(fc.integer({ min: 0, max: Date.UTC(2100, 0, 1) }), fc.double({ min: 0, max: 0.999, noNaN: true }))
  .map(([ms, frac]) => ms + frac);

describe('utcDay / utcMonth', () => {
  test('default', () => {
    assert.equal(utcDay(Date.UTC(2027, 0, 31, 12)), '2027-01-31');
    assert.equal(utcMonth(Date.UTC(2027, 0, 31, 12)), '2027-01');
    assert.equal(utcDay(0), '1970-01-01');
  });

  test('behavior: midnight belongs to the day it starts', () => {
    assert.equal(utcDay(Date.UTC(2027, 1, 1)), '2027-02-01');
    assert.equal(utcDay(Date.UTC(2027, 1, 1) - 0.001), '2027-01-31');
    assert.equal(utcMonth(Date.UTC(2027, 1, 1) - 0.001), '2027-01');
  });

  test('behavior: leap day and year end', () => {
    assert.equal(utcDay(Date.UTC(2028, 1, 29, 23, 59, 59, 999)), '2028-02-29');
    assert.equal(utcDay(Date.UTC(2027, 11, 31, 23, 59, 59, 999) + 0.5), '2027-12-31');
    assert.equal(utcDay(Date.UTC(2028, 0, 1)), '2028-01-01');
  });

  test('behavior: agrees with Date#toISOString for any instant', () => {
    fc.assert(
      fc.property(instant, (t) => {
        assert.equal(utcDay(t), iso(Math.floor(t)).slice(0, 10));
        assert.equal(utcMonth(t), iso(Math.floor(t)).slice(0, 7));
      }),
    );
  });

  test('error: not a finite instant', () => {
    assert.throws(() => utcDay(Number.NaN), RangeError);
    assert.throws(() => utcMonth(Number.POSITIVE_INFINITY), RangeError);
  });
});

describe('nextUtcMidnight', () => {
  test('default', () => {
    assert.equal(iso(nextUtcMidnight(Date.UTC(2027, 0, 31, 15, 30))), '2027-02-01T00:00:00.000Z');
  });

  test('behavior: at exactly midnight, the following midnight', () => {
    assert.equal(nextUtcMidnight(Date.UTC(2027, 2, 1)), Date.UTC(2027, 2, 2));
  });

  test('behavior: month ends, leap years and year end', () => {
    assert.equal(iso(nextUtcMidnight(Date.UTC(2027, 1, 28, 12))), '2027-03-01T00:00:00.000Z');
    assert.equal(iso(nextUtcMidnight(Date.UTC(2028, 1, 28, 12))), '2028-02-29T00:00:00.000Z');
    assert.equal(iso(nextUtcMidnight(Date.UTC(2028, 1, 29, 12))), '2028-03-01T00:00:00.000Z');
    assert.equal(
      iso(nextUtcMidnight(Date.UTC(2027, 11, 31, 23, 59, 59, 999) + 0.9)),
      '2028-01-01T00:00:00.000Z',
    );
  });

  test('behavior: later than now, at most one day later, a multiple of a day', () => {
    fc.assert(
      fc.property(instant, (t) => {
        const next = nextUtcMidnight(t);
        assert.ok(next > t);
        assert.ok(next <= t + DAY_MS);
        assert.equal(next % DAY_MS, 0);
        assert.equal(utcDay(next - 1), utcDay(t));
      }),
    );
  });
});

describe('nextUtcMonthStart', () => {
  test('default', () => {
    assert.equal(iso(nextUtcMonthStart(Date.UTC(2027, 0, 15))), '2027-02-01T00:00:00.000Z');
  });

  test('behavior: month ends, leap years and year end', () => {
    assert.equal(iso(nextUtcMonthStart(Date.UTC(2027, 0, 31, 23, 59, 59, 999))), '2027-02-01T00:00:00.000Z');
    assert.equal(iso(nextUtcMonthStart(Date.UTC(2028, 1, 29, 23))), '2028-03-01T00:00:00.000Z');
    assert.equal(
      iso(nextUtcMonthStart(Date.UTC(2027, 11, 31, 23, 59, 59, 999) + 0.5)),
      '2028-01-01T00:00:00.000Z',
    );
    assert.equal(iso(nextUtcMonthStart(Date.UTC(2027, 11, 1))), '2028-01-01T00:00:00.000Z');
  });

  test('behavior: the 1st at 00:00 UTC after now, ending the month of now', () => {
    fc.assert(
      fc.property(instant, (t) => {
        const next = nextUtcMonthStart(t);
        assert.ok(next > t);
        assert.ok(next <= t + 31 * DAY_MS);
        assert.equal(next % DAY_MS, 0);
        assert.equal(utcDay(next).slice(8), '01');
        assert.equal(utcMonth(next - 1), utcMonth(t));
      }),
    );
  });
});

describe('dayStartMs / monthStartMs', () => {
  test('default', () => {
    assert.equal(dayStartMs(Date.UTC(2028, 1, 29, 13, 1, 2, 3) + 0.25), Date.UTC(2028, 1, 29));
    assert.equal(dayStartMs('2028-02-29'), Date.UTC(2028, 1, 29));
    assert.equal(monthStartMs(Date.UTC(2028, 1, 29, 13)), Date.UTC(2028, 1, 1));
    assert.equal(monthStartMs('2027-12'), Date.UTC(2027, 11, 1));
  });

  test('behavior: round-trips with utcDay and utcMonth', () => {
    fc.assert(
      fc.property(instant, (t) => {
        assert.equal(dayStartMs(utcDay(t)), dayStartMs(t));
        assert.equal(monthStartMs(utcMonth(t)), monthStartMs(t));
        assert.ok(dayStartMs(t) <= t && t < dayStartMs(t) + DAY_MS);
        assert.ok(monthStartMs(t) <= t && t < nextUtcMonthStart(t));
      }),
    );
  });

  test('error: not a calendar date or month', () => {
    assert.throws(() => dayStartMs('2027-02-29'), RangeError);
    assert.throws(() => dayStartMs('2027-13-01'), RangeError);
    assert.throws(() => dayStartMs('2027-1-01'), RangeError);
    assert.throws(() => monthStartMs('2027-00'), RangeError);
    assert.throws(() => monthStartMs('2027-01-01'), RangeError);
  });
});

describe('monthOfDay', () => {
  test('default', () => {
    assert.equal(monthOfDay('2028-02-29'), '2028-02');
    assert.equal(monthOfDay('2027-12-31'), '2027-12');
  });

  test('error: malformed day', () => {
    assert.throws(() => monthOfDay('2027-02'), RangeError);
  });
});
