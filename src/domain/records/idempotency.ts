/** Idempotency claims of self-service writes (src/store/ports/idempotency.ts). */

/**
 * A request made under an `Idempotency-Key`, claimed before it does its work. Times are epoch
 * ms of the caller's clock; the store keeps none of its own.
 */
export interface IdempotencyClaim {
  /** A digest of the key and its scope (account, mode): the key itself is not stored. */
  id: string;
  /** A digest of the request: the key reused for another request is refused (MISMATCH). */
  fingerprint: string;
  /** This claim's own random token: only its holder stores the answer or releases the claim. */
  token: string;
  now: number;
  /** Unanswered past this time, the claim is abandoned (its request died): the next one takes it over. */
  lockedUntil: number;
  /** When the record is forgotten: from then on the key is new again, and the record is pruned. */
  expiresAt: number;
}

export type IdempotencyClaimResult =
  /** Claimed (new, expired or abandoned before): do the work, then answer or release. */
  | { ok: true }
  /** Another request holds the key and has not answered yet. */
  | { ok: false; reason: 'IN_FLIGHT'; lockedUntil: number }
  /** The key was used for another request (another fingerprint). */
  | { ok: false; reason: 'MISMATCH' }
  /** The key's request was answered: `response` as stored (opaque to the store). */
  | { ok: false; reason: 'ANSWERED'; status: number; response: string };

/** The answer of a claimed request, stored with the work it reports (KeyStore.createKeyWithin). */
export interface IdempotentAnswer {
  id: string;
  token: string;
  status: number;
  /** Opaque to the store. */
  response: string;
}
