import { DAY_MS } from '../domain/periods.ts';
import type { Tier } from './tiers.ts';

/** Default `limit` when omitted (README "Tiers"). */
export const DEFAULT_LIMIT = 50;

export interface Clamp<T> {
  requested: T;
  applied: T;
}

export interface Clamped {
  limit?: Clamp<number>;
  chainIds?: Clamp<number[]>;
  startDate?: Clamp<string>;
}

/**
 * Effective `limit` (docs/decisions.md "Clamping"): the stricter of the route maximum and the tier's result
 * cap; a larger request is lowered silently and reported. Omitted, it is the default (50)
 * within that maximum, which is not a clamp.
 */
export function clampLimit(
  requested: number | undefined,
  routeMax: number,
  tier: Tier,
): { applied: number; clamp?: Clamp<number> } {
  const max = tier.resultCap === null ? routeMax : Math.min(routeMax, tier.resultCap);
  if (requested === undefined) return { applied: Math.min(DEFAULT_LIMIT, max) };
  if (requested <= max) return { applied: requested };
  return { applied: max, clamp: { requested, applied: max } };
}

/**
 * Chains in scope (docs/decisions.md "Clamping"): requested chains filtered to the tier's; omitted, the tier's chains
 * (undefined = every chain). An empty result is allowed: the answer is then empty.
 */
export function scopeChains(
  requested: readonly number[] | undefined,
  tier: Tier,
): { applied: number[] | undefined; clamp?: Clamp<number[]> } {
  const allowed = tier.chains;
  if (requested === undefined) return { applied: allowed === null ? undefined : [...allowed] };
  const unique = [...new Set(requested)];
  if (allowed === null) return { applied: unique };
  const applied = unique.filter((c) => allowed.includes(c));
  if (applied.length === unique.length) return { applied };
  return { applied, clamp: { requested: unique, applied } };
}

/**
 * Earliest date a tier may see (docs/decisions.md "Clamping"): `startDate` raised to now minus the history window.
 * Omitted, it is the start of the window (or undefined for an unlimited window); not a clamp.
 * Dates are epoch ms in, ISO 8601 strings in the clamp report.
 */
export function clampStartDate(
  requestedMs: number | undefined,
  tier: Tier,
  nowMs: number,
): { applied: number | undefined; clamp?: Clamp<string> } {
  const floor = tier.historyDays === null ? undefined : nowMs - tier.historyDays * DAY_MS;
  if (requestedMs === undefined) return { applied: floor };
  if (floor === undefined || requestedMs >= floor) return { applied: requestedMs };
  return {
    applied: floor,
    clamp: { requested: new Date(requestedMs).toISOString(), applied: new Date(floor).toISOString() },
  };
}

/** What a request asks for, parsed: the `limit`, `chainIds` and `startDate` the clamps apply to. */
export interface ScopeRequest {
  limit?: number | undefined;
  chainIds?: readonly number[] | undefined;
  /** `startDate`, epoch ms. */
  startMs?: number | undefined;
}

/** A request's scope after the clamps, and what they changed (meta.clamped; undefined when nothing). */
export interface ClampedScope {
  limit: number;
  chainIds: number[] | undefined;
  startMs: number | undefined;
  clamped: Clamped | undefined;
}

/**
 * Every clamp of "Clamping" (docs/decisions.md) at once, for an HTTP route and an MCP tool alike: `limit` up to the
 * stricter of `routeMax` (the route's or tool's maximum) and the tier's result cap, `chainIds`
 * filtered to the tier's chains, `startDate` raised to the tier's history window.
 */
export function clampScope(q: ScopeRequest, routeMax: number, tier: Tier, nowMs: number): ClampedScope {
  const limit = clampLimit(q.limit, routeMax, tier);
  const chains = scopeChains(q.chainIds, tier);
  const start = clampStartDate(q.startMs, tier, nowMs);
  const clamped =
    limit.clamp || chains.clamp || start.clamp
      ? {
          ...(limit.clamp ? { limit: limit.clamp } : {}),
          ...(chains.clamp ? { chainIds: chains.clamp } : {}),
          ...(start.clamp ? { startDate: start.clamp } : {}),
        }
      : undefined;
  return { limit: limit.applied, chainIds: chains.applied, startMs: start.applied, clamped };
}
