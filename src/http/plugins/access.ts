import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AdmissionResult } from '../../access/admission.ts';
import type { RateState } from '../../access/sliding-window.ts';
import { type Tier, type TierId, tierAllowsCategory, tierAllowsChain } from '../../access/tiers.ts';
import { nextUtcMidnight, nextUtcMonthStart } from '../../domain/periods.ts';
import type { AppDeps } from '../context.ts';
import { ApiError, unauthorized } from '../errors.ts';
import { parseMarketId } from '../params.ts';

const BEARER = /^bearer +([^\s]+) *$/i;

/** `Authorization: Bearer <key>`; the scheme is case-insensitive (RFC 9110). Null when malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined || header.length > 512) return null;
  const m = BEARER.exec(header);
  return m ? m[1]! : null;
}

function setRateHeaders(reply: FastifyReply, rate: RateState, nowMs: number): void {
  const resetAt = Math.ceil(rate.resetAt);
  const resetIn = Math.max(1, Math.ceil((rate.resetAt - nowMs) / 1000));
  reply.header('x-ratelimit-limit', rate.limit);
  reply.header('x-ratelimit-remaining', rate.remaining);
  reply.header('x-ratelimit-reset', resetAt);
  // IETF draft-ietf-httpapi-ratelimit-headers: a policy of q requests per w seconds, and what is left of it.
  reply.header('ratelimit-policy', `"per-second";q=${rate.limit};w=1`);
  reply.header('ratelimit', `"per-second";r=${rate.remaining};t=${resetIn}`);
}

function retryAfterSeconds(ms: number): string {
  return String(Math.max(1, Math.ceil(ms / 1000)));
}

function refusal(result: Exclude<AdmissionResult, { ok: true }>, tier: Tier, nowMs: number): ApiError {
  if (result.reason === 'RATE_LIMITED') {
    const seconds = Math.ceil(result.retryAfterMs) / 1000;
    return new ApiError(
      'RATE_LIMIT_EXCEEDED',
      `Rate limit of ${tier.ratePerSecond} requests per second exceeded; retry after ${seconds.toFixed(3)} s`,
      { retryAfter: seconds },
      { 'retry-after': retryAfterSeconds(result.retryAfterMs) },
    );
  }
  if (result.reason === 'DAILY_QUOTA') {
    return new ApiError(
      'DAILY_QUOTA_EXCEEDED',
      `Daily quota of ${result.limit} requests exceeded; it resets at 00:00 UTC.`,
      { limit: result.limit, used: result.used },
      { 'retry-after': retryAfterSeconds(nextUtcMidnight(nowMs) - nowMs) },
    );
  }
  return new ApiError(
    'MONTHLY_QUOTA_EXCEEDED',
    `Monthly quota of ${result.limit} requests exceeded; it resets on the 1st at 00:00 UTC.`,
    { limit: result.limit, used: result.used },
    { 'retry-after': retryAfterSeconds(nextUtcMonthStart(nowMs) - nowMs) },
  );
}

/**
 * The access pipeline, in the order of DECISIONS D7: authenticate, rate limit, daily quota,
 * monthly quota, category and chain access. Parameter validation and clamping follow in
 * Fastify's validation stage and the clamp hook. Runs for every route of the protected scope.
 */
export function accessHook(deps: AppDeps) {
  return async function access(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config.access;
    if (!config) throw new Error(`route ${request.routeOptions.url} declares no access config`);

    const token = bearerToken(request.headers.authorization);
    if (token === null) throw unauthorized();
    const check = await deps.keys.verify(token);
    if (!check.ok) throw unauthorized();
    const tier = deps.tiers[check.key.tier as TierId];
    if (!tier) {
      request.log.error(
        { keyId: check.key.id, tier: check.key.tier },
        'key has a tier missing from the tier file',
      );
      throw unauthorized();
    }
    request.caller = { key: check.key, tier };

    const nowMs = deps.clock.now();
    const result = await deps.admission.admit({
      keyId: check.key.id,
      tier,
      endpoint: `${request.method} ${request.routeOptions.url}`,
      counted: config.counted !== false,
      nowMs,
    });
    setRateHeaders(reply, result.rate, nowMs);
    if (!result.ok) throw refusal(result, tier, nowMs);

    if (config.category !== null && !tierAllowsCategory(tier, config.category)) {
      throw new ApiError(
        'TIER_FORBIDDEN',
        `The ${tier.id} tier does not include the '${config.category}' endpoints.`,
        { tier: tier.id, category: config.category },
      );
    }
    if (config.singleMarket) {
      const id = parseMarketId((request.params as { marketId?: string }).marketId);
      if (id && !tierAllowsChain(tier, id.chainId)) {
        throw new ApiError('CHAIN_FORBIDDEN', `The ${tier.id} tier does not include chain ${id.chainId}.`, {
          tier: tier.id,
          chainId: id.chainId,
        });
      }
    }
  };
}

/** The access pipeline's request state: the authenticated caller, set by accessHook. */
export const accessPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('caller', null);
  },
  { name: 'lrds-access' },
);
