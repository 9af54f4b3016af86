/** The first retry comes this long after a failed attempt; each later one waits twice as long. */
export const FIRST_RETRY_MS = 10_000;
/** No wait between two attempts is longer than this. */
export const MAX_RETRY_WAIT_MS = 60 * 60_000;
/** A delivery not delivered this long after its event was created is marked failed. */
export const RETRY_WINDOW_MS = 24 * 60 * 60_000;

/**
 * When to try a delivery again after its `attempts`-th failed attempt (1 for the first) at
 * `nowMs`: FIRST_RETRY_MS x 2^(attempts - 1), at most MAX_RETRY_WAIT_MS (10 s, 20 s, 40 s, … ,
 * then hourly). Null when that falls after the retry window of the delivery created at
 * `createdAtMs`: the delivery has failed for good.
 */
export function nextAttemptAt(attempts: number, nowMs: number, createdAtMs: number): number | null {
  const wait = Math.min(MAX_RETRY_WAIT_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempts - 1));
  const at = nowMs + wait;
  return at > createdAtMs + RETRY_WINDOW_MS ? null : at;
}
