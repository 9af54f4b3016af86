import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import fc from 'fast-check';
import { QuotaCounters, type QuotaLimits } from '../../src/access/quota.ts';

const FREE: QuotaLimits = { daily: 1000, monthly: 10_000 };
const at = (iso: string) => Date.parse(iso);

/** Consumes n requests at `nowMs`, returning the last result. */
function consumeN(q: QuotaCounters, key: string, limits: QuotaLimits, nowMs: number, n: number) {
  let last = q.consume(key, limits, nowMs);
  for (let i = 1; i < n; i++) last = q.consume(key, limits, nowMs);
  return last;
}

describe('QuotaCounters', () => {
  test('default: an admitted request reports both periods', () => {
    const q = new QuotaCounters();
    assert.deepEqual(q.consume('k', FREE, at('2027-01-15T10:00:00Z')), {
      ok: true,
      day: '2027-01-15',
      countedMonthly: true,
      daily: { used: 1, limit: 1000, resetAt: at('2027-01-16T00:00:00Z') },
      monthly: { used: 1, limit: 10_000, resetAt: at('2027-02-01T00:00:00Z') },
    });
  });

  test('behavior: the daily quota is admitted exactly, the next request refused', () => {
    const q = new QuotaCounters();
    const t = at('2027-01-15T10:00:00Z');
    const last = consumeN(q, 'k', { daily: 3, monthly: null }, t, 3);
    assert.equal(last.ok, true);
    assert.deepEqual(q.consume('k', { daily: 3, monthly: null }, t), {
      ok: false,
      reason: 'DAILY_QUOTA',
      limit: 3,
      used: 4,
      resetAt: at('2027-01-16T00:00:00Z'),
      day: '2027-01-15',
      countedMonthly: false,
    });
  });

  test('behavior: a daily refusal does not touch the monthly counter', () => {
    const q = new QuotaCounters();
    const t = at('2027-01-15T10:00:00Z');
    consumeN(q, 'k', { daily: 2, monthly: 100 }, t, 10);
    assert.deepEqual(q.usage('k', t), { day: '2027-01-15', dayUsed: 10, month: '2027-01', monthUsed: 2 });
  });

  test('behavior: the monthly quota refuses once exceeded, still counting', () => {
    const q = new QuotaCounters();
    const limits = { daily: 10, monthly: 12 };
    consumeN(q, 'k', limits, at('2027-03-01T00:00:00Z'), 10);
    const r = consumeN(q, 'k', limits, at('2027-03-02T00:00:00Z'), 2);
    assert.equal(r.ok, true);
    assert.deepEqual(q.consume('k', limits, at('2027-03-02T05:00:00Z')), {
      ok: false,
      reason: 'MONTHLY_QUOTA',
      limit: 12,
      used: 13,
      resetAt: at('2027-04-01T00:00:00Z'),
      day: '2027-03-02',
      countedMonthly: true,
    });
    assert.deepEqual(q.usage('k', at('2027-03-02T05:00:00Z')), {
      day: '2027-03-02',
      dayUsed: 3,
      month: '2027-03',
      monthUsed: 13,
    });
  });

  test('behavior: null quotas are unlimited but counted', () => {
    const q = new QuotaCounters();
    const r = consumeN(q, 'k', { daily: null, monthly: null }, at('2027-01-15T10:00:00Z'), 5000);
    assert.ok(r.ok);
    assert.deepEqual(r.daily, { used: 5000, limit: null, resetAt: at('2027-01-16T00:00:00Z') });
    assert.equal(r.monthly.used, 5000);
  });

  test('behavior: the daily counter rolls over at midnight UTC', () => {
    const q = new QuotaCounters();
    const limits = { daily: 2, monthly: null };
    consumeN(q, 'k', limits, at('2027-01-15T23:59:59.999Z'), 2);
    assert.equal(q.consume('k', limits, at('2027-01-15T23:59:59.999Z') + 0.5).ok, false);
    const r = q.consume('k', limits, at('2027-01-16T00:00:00Z'));
    assert.ok(r.ok);
    assert.equal(r.day, '2027-01-16');
    assert.equal(r.daily.used, 1);
    assert.equal(r.monthly.used, 3);
  });

  test('behavior: month ends roll the monthly counter (Jan 31 -> Feb 1, Feb 28 -> Mar 1 in 2027)', () => {
    const q = new QuotaCounters();
    const limits = { daily: null, monthly: 3 };
    consumeN(q, 'k', limits, at('2027-01-31T23:59:59.999Z'), 3);
    assert.equal(q.consume('k', limits, at('2027-01-31T23:59:59.999Z')).ok, false);
    const feb = q.consume('k', limits, at('2027-02-01T00:00:00Z'));
    assert.ok(feb.ok);
    assert.deepEqual(feb.monthly, { used: 1, limit: 3, resetAt: at('2027-03-01T00:00:00Z') });
    consumeN(q, 'k', limits, at('2027-02-28T23:59:59.999Z'), 2);
    assert.equal(q.consume('k', limits, at('2027-02-28T23:59:59.999Z')).ok, false);
    const mar = q.consume('k', limits, at('2027-03-01T00:00:00Z'));
    assert.ok(mar.ok);
    assert.equal(mar.day, '2027-03-01');
    assert.equal(mar.monthly.used, 1);
  });

  test('behavior: Feb 29 2028 is a day of February', () => {
    const q = new QuotaCounters();
    const limits = { daily: 1, monthly: 2 };
    assert.ok(q.consume('k', limits, at('2028-02-28T12:00:00Z')).ok);
    const leap = q.consume('k', limits, at('2028-02-29T12:00:00Z'));
    assert.ok(leap.ok);
    assert.equal(leap.day, '2028-02-29');
    assert.deepEqual(leap.daily, { used: 1, limit: 1, resetAt: at('2028-03-01T00:00:00Z') });
    assert.deepEqual(leap.monthly, { used: 2, limit: 2, resetAt: at('2028-03-01T00:00:00Z') });
    const late = q.consume('k', { daily: 5, monthly: 2 }, at('2028-02-29T23:00:00Z'));
    assert.equal(late.ok, false);
    assert.equal(!late.ok && late.reason, 'MONTHLY_QUOTA');
    assert.ok(q.consume('k', limits, at('2028-03-01T00:00:00Z')).ok);
  });

  test('behavior: year end (Dec 31 23:59:59.999 -> Jan 1) rolls both counters', () => {
    const q = new QuotaCounters();
    const limits = { daily: 1, monthly: 1 };
    assert.ok(q.consume('k', limits, at('2027-12-31T23:59:59.999Z')).ok);
    assert.equal(q.consume('k', limits, at('2027-12-31T23:59:59.999Z')).ok, false);
    const r = q.consume('k', limits, at('2028-01-01T00:00:00Z'));
    assert.ok(r.ok);
    assert.equal(r.day, '2028-01-01');
    assert.deepEqual(r.monthly, { used: 1, limit: 1, resetAt: at('2028-02-01T00:00:00Z') });
  });

  test('behavior: load() seeds the counters from persisted usage', () => {
    const q = new QuotaCounters();
    const t = at('2027-05-20T08:00:00Z');
    assert.equal(q.has('k'), false);
    q.load('k', { day: '2027-05-20', dayUsed: 999, month: '2027-05', monthUsed: 5000 });
    assert.equal(q.has('k'), true);
    const r = q.consume('k', FREE, t);
    assert.ok(r.ok);
    assert.equal(r.daily.used, 1000);
    assert.equal(r.monthly.used, 5001);
    const refused = q.consume('k', FREE, t);
    assert.equal(!refused.ok && refused.reason, 'DAILY_QUOTA');
    assert.equal(!refused.ok && refused.used, 1001);
  });

  test('behavior: load() of a past day keeps the month and restarts the day', () => {
    const q = new QuotaCounters();
    q.load('k', { day: '2027-05-19', dayUsed: 1000, month: '2027-05', monthUsed: 9999 });
    const r = q.consume('k', FREE, at('2027-05-20T08:00:00Z'));
    assert.ok(r.ok);
    assert.equal(r.daily.used, 1);
    assert.equal(r.monthly.used, 10_000);
    const refused = q.consume('k', FREE, at('2027-05-20T08:00:01Z'));
    assert.equal(!refused.ok && refused.reason, 'MONTHLY_QUOTA');
  });

  test('behavior: a late load() never lowers what memory counted', () => {
    const q = new QuotaCounters();
    const t = at('2027-05-20T08:00:00Z');
    consumeN(q, 'k', FREE, t, 5);
    q.load('k', { day: '2027-05-20', dayUsed: 2, month: '2027-05', monthUsed: 7 });
    assert.deepEqual(q.usage('k', t), { day: '2027-05-20', dayUsed: 5, month: '2027-05', monthUsed: 7 });
  });

  test('error: load() with malformed usage', () => {
    const q = new QuotaCounters();
    assert.throws(
      () => q.load('k', { day: '2027-02-30', dayUsed: 0, month: '2027-02', monthUsed: 0 }),
      RangeError,
    );
    assert.throws(
      () => q.load('k', { day: '2027-02-01', dayUsed: -1, month: '2027-02', monthUsed: 0 }),
      RangeError,
    );
    assert.throws(
      () => q.load('k', { day: '2027-02-01', dayUsed: 0, month: '2027-01', monthUsed: 0 }),
      RangeError,
    );
    assert.throws(
      () => q.load('k', { day: '2027-02-01', dayUsed: 0, month: '2027-02', monthUsed: 1.5 }),
      RangeError,
    );
    assert.equal(q.has('k'), false);
  });

  test('behavior: time going backwards within a key counts in its current day', () => {
    const q = new QuotaCounters();
    const limits = { daily: 2, monthly: null };
    consumeN(q, 'k', limits, at('2027-01-16T00:00:01Z'), 2);
    const r = q.consume('k', limits, at('2027-01-15T23:59:59Z'));
    assert.equal(!r.ok && r.reason, 'DAILY_QUOTA');
    assert.equal(r.day, '2027-01-16');
  });

  test('behavior: usage() counts nothing and reads zero after a rollover', () => {
    const q = new QuotaCounters();
    consumeN(q, 'k', FREE, at('2027-01-31T12:00:00Z'), 4);
    assert.deepEqual(q.usage('k', at('2027-01-31T13:00:00Z')), {
      day: '2027-01-31',
      dayUsed: 4,
      month: '2027-01',
      monthUsed: 4,
    });
    assert.deepEqual(q.usage('k', at('2027-02-01T00:00:00Z')), {
      day: '2027-02-01',
      dayUsed: 0,
      month: '2027-02',
      monthUsed: 0,
    });
    assert.deepEqual(q.usage('nobody', at('2027-01-31T13:00:00Z')), {
      day: '2027-01-31',
      dayUsed: 0,
      month: '2027-01',
      monthUsed: 0,
    });
  });

  test('behavior: keys from past periods are evicted when the day rolls over', () => {
    const q = new QuotaCounters();
    for (let i = 0; i < 100; i++) q.consume(`jan-${i}`, FREE, at('2027-01-31T12:00:00Z'));
    q.consume('feb', FREE, at('2027-02-01T00:00:00Z'));
    assert.equal(q.size, 1);
    // A key still inside its month keeps its monthly count across days.
    q.consume('feb', FREE, at('2027-02-02T00:00:00Z'));
    assert.equal(q.size, 1);
    assert.equal(q.usage('feb', at('2027-02-02T00:00:00Z')).monthUsed, 2);
    q.consume('other', FREE, at('2027-03-01T00:00:00Z'));
    assert.equal(q.size, 1);
    assert.equal(q.has('feb'), false);
  });

  test('behavior: within one day, exactly min(N, Q) of N requests are admitted, the first ones', () => {
    const dayStart = at('2027-06-10T00:00:00Z');
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        // up to 23:59:59.999 (a larger fraction could round to midnight once added to the epoch)
        fc.array(fc.double({ min: 0, max: 86_399_999, noNaN: true }), { maxLength: 500 }),
        (quota, offsets) => {
          const q = new QuotaCounters();
          const times = offsets.map((o) => dayStart + o).sort((a, b) => a - b);
          const results = times.map((t) => q.consume('k', { daily: quota, monthly: null }, t));
          const admitted = results.filter((r) => r.ok).length;
          assert.equal(admitted, Math.min(times.length, quota));
          assert.ok(results.slice(0, admitted).every((r) => r.ok));
          results.forEach((r, i) => {
            assert.equal(r.day, '2027-06-10');
            if (!r.ok) assert.deepEqual([r.reason, r.used, r.countedMonthly], ['DAILY_QUOTA', i + 1, false]);
          });
        },
      ),
    );
  });

  test('behavior: over a month, every decision matches a reference model of "Order of checks and what counts" (docs/decisions.md)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.integer({ min: 1, max: 100 }),
        fc.array(fc.integer({ min: 0, max: 30 * 86_400_000 - 1 }), { maxLength: 300 }),
        (daily, monthly, offsets) => {
          const q = new QuotaCounters();
          const start = at('2027-04-01T00:00:00Z');
          const perDay = new Map<number, number>();
          let month = 0;
          for (const t of offsets.map((o) => start + o).sort((a, b) => a - b)) {
            const dayIndex = Math.floor((t - start) / 86_400_000);
            const dayUsed = (perDay.get(dayIndex) ?? 0) + 1;
            perDay.set(dayIndex, dayUsed);
            const r = q.consume('k', { daily, monthly }, t);
            assert.equal(r.day, `2027-04-${String(dayIndex + 1).padStart(2, '0')}`);
            if (dayUsed > daily) {
              assert.deepEqual(r, {
                ok: false,
                reason: 'DAILY_QUOTA',
                limit: daily,
                used: dayUsed,
                resetAt: start + (dayIndex + 1) * 86_400_000,
                day: r.day,
                countedMonthly: false,
              });
              continue;
            }
            month++;
            if (month > monthly) {
              assert.deepEqual(r, {
                ok: false,
                reason: 'MONTHLY_QUOTA',
                limit: monthly,
                used: month,
                resetAt: at('2027-05-01T00:00:00Z'),
                day: r.day,
                countedMonthly: true,
              });
            } else {
              assert.ok(r.ok);
              assert.equal(r.daily.used, dayUsed);
              assert.equal(r.monthly.used, month);
            }
          }
          assert.equal(q.usage('k', at('2027-04-30T23:59:59.999Z')).monthUsed, month);
        },
      ),
    );
  });
});
