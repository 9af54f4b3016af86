/**
 * UTC calendar periods for quotas (README "Tiers": the daily quota resets at midnight UTC, the
 * monthly quota on the 1st of each month at 00:00 UTC). Pure: every instant is passed in as
 * epoch milliseconds (`nowMs`, fractions allowed), never read from a clock.
 *
 * Preconditions: instants are finite and within years 0000 to 9999 (the range the
 * `YYYY-MM-DD` / `YYYY-MM` formats can spell); anything else throws a RangeError (a bug).
 * An instant exactly at 00:00 UTC belongs to the day that starts there.
 */

/** Length of a UTC day in milliseconds (UTC has no daylight saving; leap seconds are not counted). */
export const DAY_MS = 86_400_000;

const MIN_MS = utcMs(0, 0, 1);
const END_MS = utcMs(10000, 0, 1);
const DAY_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const MONTH_RE = /^(\d{4})-(\d{2})$/;

function assertInstant(ms: number): void {
  if (!(ms >= MIN_MS && ms < END_MS)) {
    throw new RangeError(`instant must be finite epoch milliseconds in years 0000-9999, got ${ms}`);
  }
}

/** Date.UTC without its two-digit-year quirk (Date.UTC(99, 0) means 1999). */
function utcMs(year: number, monthIndex: number, day: number): number {
  const d = new Date(0);
  d.setUTCFullYear(year, monthIndex, day);
  return d.getTime();
}

function pad2(n: number): string {
  return n < 10 ? `0${n}` : String(n);
}

function pad4(n: number): string {
  return String(n).padStart(4, '0');
}

/** Parses 'YYYY-MM-DD' (a real calendar date) into [year, monthIndex 0-11, day 1-31]. */
function parseDay(day: string): [number, number, number] {
  const m = DAY_RE.exec(day);
  if (m) {
    const y = Number(m[1]);
    const mo = Number(m[2]) - 1;
    const d = Number(m[3]);
    if (mo >= 0 && mo < 12 && d >= 1 && new Date(utcMs(y, mo, d)).getUTCDate() === d) return [y, mo, d];
  }
  throw new RangeError(`day must be a calendar date 'YYYY-MM-DD', got '${day}'`);
}

/** Parses 'YYYY-MM' into [year, monthIndex 0-11]. */
function parseMonth(month: string): [number, number] {
  const m = MONTH_RE.exec(month);
  if (m) {
    const y = Number(m[1]);
    const mo = Number(m[2]) - 1;
    if (mo >= 0 && mo < 12) return [y, mo];
  }
  throw new RangeError(`month must be 'YYYY-MM', got '${month}'`);
}

/**
 * Epoch ms of 00:00 UTC starting a day: the day containing the instant `nowMs`, or the
 * day named 'YYYY-MM-DD'. Always an integer multiple of DAY_MS.
 */
export function dayStartMs(nowMs: number): number;
export function dayStartMs(day: string): number;
export function dayStartMs(at: number | string): number {
  if (typeof at === 'string') {
    const [y, mo, d] = parseDay(at);
    return utcMs(y, mo, d);
  }
  assertInstant(at);
  return Math.floor(at / DAY_MS) * DAY_MS;
}

/** Epoch ms of 00:00 UTC on the 1st of a month: the month containing `nowMs`, or the month named 'YYYY-MM'. */
export function monthStartMs(nowMs: number): number;
export function monthStartMs(month: string): number;
export function monthStartMs(at: number | string): number {
  if (typeof at === 'string') {
    const [y, mo] = parseMonth(at);
    return utcMs(y, mo, 1);
  }
  assertInstant(at);
  const d = new Date(Math.floor(at));
  return utcMs(d.getUTCFullYear(), d.getUTCMonth(), 1);
}

/** The UTC calendar day containing `nowMs`, as 'YYYY-MM-DD'. */
export function utcDay(nowMs: number): string {
  assertInstant(nowMs);
  const d = new Date(Math.floor(nowMs));
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}-${pad2(d.getUTCDate())}`;
}

/** The UTC calendar month containing `nowMs`, as 'YYYY-MM'. */
export function utcMonth(nowMs: number): string {
  assertInstant(nowMs);
  const d = new Date(Math.floor(nowMs));
  return `${pad4(d.getUTCFullYear())}-${pad2(d.getUTCMonth() + 1)}`;
}

/**
 * Epoch ms of the next 00:00 UTC strictly after `nowMs` (when the daily quota resets).
 * At exactly midnight this is the following midnight, 86,400,000 ms later.
 */
export function nextUtcMidnight(nowMs: number): number {
  return dayStartMs(nowMs) + DAY_MS;
}

/**
 * Epoch ms of 00:00 UTC on the 1st of the month after the one containing `nowMs` (when the
 * monthly quota resets). December rolls into January of the next year.
 */
export function nextUtcMonthStart(nowMs: number): number {
  assertInstant(nowMs);
  const d = new Date(Math.floor(nowMs));
  return utcMs(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
}

/** The month 'YYYY-MM' a day 'YYYY-MM-DD' belongs to. Throws a RangeError for a malformed day. */
export function monthOfDay(day: string): string {
  parseDay(day);
  return day.slice(0, 7);
}
