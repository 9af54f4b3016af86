import { createHmac, timingSafeEqual } from 'node:crypto';

/** The header carrying a delivery's signature: `t=<unix seconds>,v1=<hex HMAC-SHA256>`. */
export const SIGNATURE_HEADER = 'LRDS-Signature';
/** The header carrying the event id (the receiver dedupes by it). */
export const EVENT_ID_HEADER = 'LRDS-Event-Id';

/** HMAC-SHA256 of `<t>.<body>` with the webhook's secret (its UTF-8 bytes, prefix included), hex. */
export function signatureOf(secret: string, t: number, rawBody: string | Uint8Array): string {
  const mac = createHmac('sha256', secret);
  mac.update(`${t}.`);
  mac.update(rawBody);
  return mac.digest('hex');
}

/** The LRDS-Signature header value for a body sent at `t` (unix seconds). */
export function signatureHeader(secret: string, t: number, rawBody: string | Uint8Array): string {
  return `t=${t},v1=${signatureOf(secret, t, rawBody)}`;
}

export type SignatureCheck =
  | { ok: true; timestamp: number }
  | { ok: false; reason: 'MALFORMED' | 'TOO_OLD' | 'MISMATCH' };

/**
 * Checks an LRDS-Signature header against the raw body: any `v1` of the header may match (a
 * header may carry several); `t` must be within `toleranceSeconds` of `nowSeconds` (default 300)
 * either way, so a captured delivery cannot be replayed later.
 */
export function verifySignature(
  rawBody: string | Uint8Array,
  header: string | undefined | null,
  secret: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): SignatureCheck {
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
  if (Math.abs(nowSeconds - t) > toleranceSeconds) return { ok: false, reason: 'TOO_OLD' };
  const expected = Buffer.from(signatureOf(secret, t, rawBody), 'hex');
  for (const c of candidates)
    if (timingSafeEqual(expected, Buffer.from(c, 'hex'))) return { ok: true, timestamp: t };
  return { ok: false, reason: 'MISMATCH' };
}
