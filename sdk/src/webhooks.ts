import { createHmac, timingSafeEqual } from 'node:crypto';

export interface VerifyOptions {
  /** How far `t` may be from now, either way, in seconds (default 300). */
  toleranceSeconds?: number;
  /** Unix seconds now; defaults to the system clock. */
  nowSeconds?: number;
}

export type VerifyResult =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'MALFORMED' | 'TOO_OLD' | 'MISMATCH' };

/**
 * Checks a webhook delivery's `LRDS-Signature` header (`t=<unix seconds>,v1=<hex>`) against the
 * raw body as received (before any JSON parsing) and the webhook's secret: `v1` must be the
 * HMAC-SHA256 of `"<t>.<raw body>"` keyed with the secret (compared in constant time), and `t`
 * within `toleranceSeconds` of now, so a captured delivery cannot be replayed later.
 */
export function verifyWebhookSignature(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string,
  options: VerifyOptions = {},
): VerifyResult {
  if (!header) return { ok: false, reason: 'MALFORMED' };
  let t: number | null = null;
  const candidates: string[] = [];
  for (const part of header.split(',')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const k = part.slice(0, eq).trim();
    const v = part.slice(eq + 1).trim();
    if (k === 't' && /^\d{1,12}$/.test(v)) t = Number(v);
    else if (k === 'v1' && /^[0-9a-f]{64}$/.test(v)) candidates.push(v);
  }
  if (t === null || candidates.length === 0) return { ok: false, reason: 'MALFORMED' };
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - t) > (options.toleranceSeconds ?? 300)) return { ok: false, reason: 'TOO_OLD' };
  const expected = createHmac('sha256', secret).update(`${t}.`).update(rawBody).digest();
  for (const c of candidates)
    if (timingSafeEqual(expected, Buffer.from(c, 'hex'))) return { ok: true, timestamp: t };
  return { ok: false, reason: 'MISMATCH' };
}
