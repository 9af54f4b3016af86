/** When and how long to retry an answer 429 or 503. */
export interface RetryOptions {
  /** Requests in all for one call, the first included (default 4). 1 turns retries off. */
  maxAttempts?: number;
  /** Backoff before the first retry, ms (default 250); doubled for each further retry. */
  baseDelayMs?: number;
  /**
   * The longest wait before one retry, ms (default 30,000). An answer asking for a longer wait
   * (e.g. a daily quota that resets at midnight) is thrown at once instead.
   */
  maxDelayMs?: number;
}

export type RetryPolicy = Required<RetryOptions>;

export const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 4, baseDelayMs: 250, maxDelayMs: 30_000 };

export function retryPolicy(options: RetryOptions | false | undefined): RetryPolicy {
  if (options === false) return { ...DEFAULT_RETRY, maxAttempts: 1 };
  const policy = { ...DEFAULT_RETRY, ...options };
  for (const [name, value] of Object.entries(policy)) {
    if (!Number.isFinite(value) || value < 0)
      throw new RangeError(`retry.${name} must be a finite number >= 0`);
  }
  if (!Number.isInteger(policy.maxAttempts) || policy.maxAttempts < 1)
    throw new RangeError('retry.maxAttempts must be an integer >= 1');
  return policy;
}

/**
 * The wait before retry number `retry` (0 for the first), ms, or null when it would exceed
 * `maxDelayMs`. Exponential backoff with equal jitter, between half and all of
 * min(maxDelayMs, baseDelayMs * 2^retry), and never shorter than the server's hint.
 * `random` is in [0, 1).
 */
export function retryDelayMs(
  retry: number,
  hintMs: number | null,
  policy: RetryPolicy,
  random: () => number,
): number | null {
  if (hintMs !== null && hintMs > policy.maxDelayMs) return null;
  const cap = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  const backoff = cap / 2 + (random() * cap) / 2;
  return Math.max(hintMs ?? 0, backoff);
}

/**
 * The wait an answer asks for, ms: the body's `retryAfter` (seconds, to the ms) when present,
 * else the `Retry-After` header (seconds, or an HTTP date compared with `nowMs`); null when none.
 */
export function serverHintMs(bodyRetryAfter: unknown, header: string | null, nowMs: number): number | null {
  if (typeof bodyRetryAfter === 'number' && Number.isFinite(bodyRetryAfter) && bodyRetryAfter >= 0)
    return bodyRetryAfter * 1000;
  if (header === null) return null;
  const text = header.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = Date.parse(text);
  return Number.isNaN(at) ? null : Math.max(0, at - nowMs);
}

/** A timer that an abort signal cuts short (rejecting with the signal's reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
