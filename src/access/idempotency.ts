import { createCipheriv, createDecipheriv, createHash, createHmac, randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import type { IdempotentAnswer } from '../domain/records/idempotency.ts';
import type { KeyMode } from '../domain/records/keys.ts';
import type { IdempotencyStore } from '../store/ports/idempotency.ts';

/** How long an answer is replayed for its Idempotency-Key (ms): 24 hours, as Stripe does. */
export const IDEMPOTENCY_TTL_MS = 24 * 3600_000;
/**
 * How long a claim unanswered belongs to its request (ms). A request lasts far less (the store's
 * deadline is 2 s); past this, the request is taken for dead and a retry takes the key over.
 */
export const IDEMPOTENCY_LEASE_MS = 10_000;
/** An Idempotency-Key: 1 to 255 visible ASCII characters (a UUID v4 is the usual choice). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x21-\\x7E]{1,255}$';

/** Whose keys an Idempotency-Key is among: an account's, per mode (a test key never meets a live key's answer). */
export interface IdempotencyScope {
  accountId: string;
  mode: KeyMode;
}

/** The request an Idempotency-Key names: its reuse with anything else is refused. */
export interface IdempotentRequest {
  method: string;
  /** Route pattern, e.g. `/api/v1/client/api-keys`. */
  route: string;
  body: unknown;
}

/** A claimed key: answer it with the work (in its transaction), or release it when the work failed. */
export interface IdempotencyTicket {
  /** The answer to store with the work: `body` sealed. */
  answer(status: number, body: unknown): IdempotentAnswer;
  /** Forgets the claim, so that a retry runs afresh. Never throws (an unreleased claim lapses with its lease). */
  release(): Promise<void>;
}

export type IdempotencyStart =
  | { ok: true; ticket: IdempotencyTicket }
  /** The key's first request was answered: its status and body, to send again. */
  | { ok: false; reason: 'REPLAY'; status: number; body: unknown }
  /** The key was used with another request in the last 24 hours. */
  | { ok: false; reason: 'MISMATCH' }
  /** The key's first request is still under way; `retryAfterMs` at most until its lease ends. */
  | { ok: false; reason: 'IN_FLIGHT'; retryAfterMs: number };

/** JSON with object keys sorted at every level: equal values, equal text. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * Idempotency-Key for self-service writes, as Stripe has it: the first request under a key does
 * the work and its answer is stored; the same key with the same request within 24 hours gets that
 * answer again (nothing done twice), with another request MISMATCH, while the first is under way
 * IN_FLIGHT. Only answers of work done are stored: a request that failed releases its key.
 *
 * The store holds neither the key nor the answer in the clear: records are named by an HMAC of
 * the scope under the key, and the answer (a new API key's secret included) is sealed with
 * AES-256-GCM under another HMAC of it, so that only a holder of the Idempotency-Key can read it.
 */
export class Idempotency {
  readonly #store: IdempotencyStore;
  readonly #clock: Clock;

  constructor(store: IdempotencyStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
  }

  async start(scope: IdempotencyScope, key: string, request: IdempotentRequest): Promise<IdempotencyStart> {
    const derive = (purpose: string) =>
      createHmac('sha256', key)
        .update(`lrds-idempotency:${purpose}\0${scope.accountId}\0${scope.mode}`)
        .digest();
    const id = derive('id').toString('hex');
    const sealKey = derive('seal');
    const fingerprint = createHash('sha256')
      .update(`${request.method} ${request.route}\n${canonicalJson(request.body)}`)
      .digest('hex');
    const token = randomBytes(16).toString('base64url');
    const now = this.#clock.now();
    const claim = await this.#store.claimIdempotencyKey({
      id,
      fingerprint,
      token,
      now,
      lockedUntil: now + IDEMPOTENCY_LEASE_MS,
      expiresAt: now + IDEMPOTENCY_TTL_MS,
    });
    if (claim.ok) {
      return {
        ok: true,
        ticket: {
          answer: (status, body) => ({ id, token, status, response: seal(sealKey, JSON.stringify(body)) }),
          release: () => this.#store.releaseIdempotencyKey(id, token).catch(() => {}),
        },
      };
    }
    if (claim.reason === 'ANSWERED') {
      return {
        ok: false,
        reason: 'REPLAY',
        status: claim.status,
        body: JSON.parse(open(sealKey, claim.response)),
      };
    }
    if (claim.reason === 'IN_FLIGHT') {
      return { ok: false, reason: 'IN_FLIGHT', retryAfterMs: Math.max(0, claim.lockedUntil - now) };
    }
    return claim;
  }
}

/** `text` sealed with AES-256-GCM under `key`: base64url of IV (12 bytes), tag (16) and ciphertext. */
function seal(key: Buffer, text: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url');
}

/** The text `seal()` sealed; throws when it was not sealed under `key` or was altered. */
function open(key: Buffer, sealed: string): string {
  const raw = Buffer.from(sealed, 'base64url');
  const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
  decipher.setAuthTag(raw.subarray(12, 28));
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
}
