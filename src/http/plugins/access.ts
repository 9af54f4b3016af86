import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { AdmissionResult } from '../../access/admission.ts';
import { admissionRefusal, chainForbidden, type Refusal, tierForbidden } from '../../access/refusals.ts';
import { type Tier, type TierId, tierAllowsCategory, tierAllowsChain } from '../../access/tiers.ts';
import { nextUtcMidnight, nextUtcMonthStart } from '../../domain/periods.ts';
import { processMetrics } from '../../metrics.ts';
import { type AppDeps, callerOf, type RouteAccess } from '../context.ts';
import { ApiError, unauthorized } from '../errors.ts';
import { parseMarketId } from '../params.ts';
import { type ChargeAnonymous, keyed } from './anonymous.ts';

const BEARER = /^bearer +([^\s]+) *$/i;

/** `Authorization: Bearer <key>`; the scheme is case-insensitive (RFC 9110). Null when malformed. */
export function bearerToken(header: string | undefined): string | null {
  if (header === undefined || header.length > 512) return null;
  return BEARER.exec(header)?.[1] ?? null;
}

/** Windows of the quota policies in RateLimit-Policy (docs/decisions.md "Quotas in headers": a month is 30 days there). */
const DAY_SECONDS = 86_400;
const MONTH_SECONDS = 2_592_000;

interface Policy {
  name: 'per-second' | 'daily' | 'monthly';
  q: number;
  w: number;
  /** Remaining, when known. */
  r: number | undefined;
  /** Seconds until it resets. */
  t: number;
}

/**
 * Rate headers. X-RateLimit-* are the per-second window (README, "Errors and limits"). The IETF headers
 * (draft-ietf-httpapi-ratelimit-headers) follow docs/decisions.md "Quotas in headers": RateLimit-Policy lists every
 * policy that applies to the request (the per-second window; for a counted request also the
 * daily and monthly quotas, unlimited ones omitted), RateLimit the one closest to exhaustion,
 * the smallest share of its quota left (ties: the later reset), and for a quota refusal that
 * quota, with r=0.
 */
export function setRateHeaders(
  reply: FastifyReply,
  result: AdmissionResult,
  tier: Tier,
  counted: boolean,
  nowMs: number,
): void {
  const rate = result.rate;
  reply.header('x-ratelimit-limit', rate.limit);
  reply.header('x-ratelimit-remaining', rate.remaining);
  reply.header('x-ratelimit-reset', Math.ceil(rate.resetAt));
  const secondsUntil = (at: number) => Math.max(1, Math.ceil((at - nowMs) / 1000));
  const perSecond: Policy & { r: number } = {
    name: 'per-second',
    q: rate.limit,
    w: 1,
    r: rate.remaining,
    t: secondsUntil(rate.resetAt),
  };
  const policies: Policy[] = [perSecond];
  if (counted) {
    const counts = 'counts' in result ? result.counts : undefined;
    if (tier.dailyQuota !== null) {
      const r = counts && Math.max(0, tier.dailyQuota - counts.dayUsed);
      policies.push({
        name: 'daily',
        q: tier.dailyQuota,
        w: DAY_SECONDS,
        r,
        t: secondsUntil(nextUtcMidnight(nowMs)),
      });
    }
    if (tier.monthlyQuota !== null) {
      const r = counts && Math.max(0, tier.monthlyQuota - counts.monthUsed);
      policies.push({
        name: 'monthly',
        q: tier.monthlyQuota,
        w: MONTH_SECONDS,
        r,
        t: secondsUntil(nextUtcMonthStart(nowMs)),
      });
    }
  }
  let closest: Policy & { r: number } = perSecond;
  const refusedBy = result.ok
    ? null
    : result.reason === 'DAILY_QUOTA'
      ? 'daily'
      : result.reason === 'MONTHLY_QUOTA'
        ? 'monthly'
        : null;
  for (const p of policies) {
    if (p.name === refusedBy) {
      closest = { ...p, r: 0 };
      break;
    }
    // The smallest share left; on a tie the later reset, the one a client must wait for.
    const r = p.r;
    if (r === undefined || !(p.q > 0)) continue;
    const share = r / p.q;
    const best = closest.r / closest.q;
    if (share < best || (share === best && p.t > closest.t)) closest = { ...p, r };
  }
  reply.header('ratelimit-policy', policies.map((p) => `"${p.name}";q=${p.q};w=${p.w}`).join(', '));
  reply.header('ratelimit', `"${closest.name}";r=${closest.r};t=${closest.t}`);
}

/** A refusal of the access rules (src/access/refusals.ts) as the error the API answers. */
function refused(r: Refusal): ApiError {
  const headers: Record<string, string> =
    r.retryAfterSeconds === undefined ? {} : { 'retry-after': String(r.retryAfterSeconds) };
  return new ApiError(r.code, r.message, r.extra, headers);
}

/** What the admission of a request decided, and when. */
export interface Admitted {
  result: AdmissionResult;
  nowMs: number;
}

/**
 * Rate limit and quotas (docs/decisions.md "Order of checks and what counts", steps 2-4) for an authenticated request: the admission,
 * its rate headers on the reply. A refusal is returned, not thrown (`refusedAdmission`).
 */
export async function admitRequest(
  deps: Pick<AppDeps, 'admission' | 'clock'>,
  request: FastifyRequest,
  reply: FastifyReply,
  how: { counted: boolean; endpoint: string },
): Promise<Admitted> {
  const { key, tier } = callerOf(request);
  const nowMs = deps.clock.now();
  const result = await deps.admission.admit({
    keyId: key.id,
    accountId: key.accountId,
    tier,
    endpoint: how.endpoint,
    counted: how.counted,
    nowMs,
  });
  setRateHeaders(reply, result, tier, how.counted, nowMs);
  return { result, nowMs };
}

/** An admission's refusal as the error the API answers (429 with Retry-After), counted in the metrics. */
export function refusedAdmission(tier: Tier, admitted: Admitted): ApiError {
  const { result, nowMs } = admitted;
  if (result.ok) throw new Error('the request was admitted');
  processMetrics().refusals.inc({ reason: result.reason, tier: tier.id });
  return refused(admissionRefusal(result, tier, nowMs));
}

/** Category and chain access ("Order of checks and what counts" (docs/decisions.md), steps 5-6): throws TIER_FORBIDDEN or CHAIN_FORBIDDEN. */
export function authorize(request: FastifyRequest, config: RouteAccess): void {
  const { tier } = callerOf(request);
  if (config.category !== null && !tierAllowsCategory(tier, config.category)) {
    throw refused(tierForbidden(tier, config.category));
  }
  if (config.chainParam) {
    const chainId = chainOf(request.params as Record<string, string | undefined>, config.chainParam);
    if (chainId !== undefined && !tierAllowsChain(tier, chainId)) {
      throw refused(chainForbidden(tier, chainId));
    }
  }
}

/**
 * The access pipeline, in the order of docs/decisions.md "Order of checks and what counts": authenticate, rate limit, daily quota,
 * monthly quota, category and chain access. Parameter validation and clamping follow in
 * Fastify's validation stage and the clamp hook. Runs for every route of the protected scope;
 * a route that admits its requests itself (`admittedByRoute`) is only authenticated here.
 */
export function accessHook(deps: AppDeps, chargeAnonymous: ChargeAnonymous) {
  return async function access(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const config = request.routeOptions.config.access;
    if (!config) throw new Error(`route ${request.routeOptions.url} declares no access config`);

    // A refused key makes the request anonymous: it spends its address's budget (429 once that
    // is spent, else 401). Without any key, it was charged when it arrived (plugins/anonymous.ts).
    const refuse = () => (keyed(request) ? chargeAnonymous(request) : null) ?? unauthorized();
    const token = bearerToken(request.headers.authorization);
    if (token === null) throw refuse();
    const check = await deps.keys.verify(token);
    if (!check.ok) throw refuse();
    const tier = deps.tiers[check.key.tier as TierId];
    if (!tier) {
      request.log.error(
        { keyId: check.key.id, tier: check.key.tier },
        'key has a tier missing from the tier file',
      );
      throw unauthorized();
    }
    request.caller = { key: check.key, tier };
    // Every later log line of this request names the key by its id (never the key itself).
    request.log = request.log.child({ keyId: check.key.id });
    reply.log = request.log;
    if (config.admittedByRoute) return;

    const admitted = await admitRequest(deps, request, reply, {
      counted: config.counted !== false,
      endpoint: `${request.method} ${request.routeOptions.url}`,
    });
    if (!admitted.result.ok) throw refusedAdmission(tier, admitted);
    authorize(request, config);
  };
}

/**
 * The chain a route's path names, before validation: undefined when the parameter is malformed
 * (validation answers 400 for it next).
 */
function chainOf(
  params: Record<string, string | undefined>,
  param: 'marketId' | 'chainId',
): number | undefined {
  if (param === 'marketId') return parseMarketId(params.marketId)?.chainId;
  const raw = params.chainId ?? '';
  return /^[0-9]{1,12}$/.test(raw) ? Number(raw) : undefined;
}

/** The access pipeline's request state: the authenticated caller, set by accessHook. */
export const accessPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('caller', null);
  },
  { name: 'lrds-access' },
);
