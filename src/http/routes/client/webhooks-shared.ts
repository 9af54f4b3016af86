import { Type } from '@fastify/type-provider-typebox';
import type { Tier } from '../../../access/tiers.ts';
import { MARKET_ID_PROBLEM, parseMarketId } from '../../../domain/market-id.ts';
import type {
  DeliveryRecord,
  EventFilters,
  EventType,
  SubscriptionRecord,
} from '../../../domain/records/events.ts';
import { ApiError, invalidParameter, type ParameterProblem } from '../../errors.ts';

/** The events a webhook or a stream may ask for (`ping` is sent by the test route only). */
export const RISK_EVENT_TYPES = [
  'position.health_factor_below',
  'position.liquidated',
  'oracle.stale',
  'oracle.recovered',
] as const satisfies readonly EventType[];

/** The caller's tier must include the risk category to subscribe to risk events. */
export function requireRisk(tier: Tier): void {
  if (!tier.categories.includes('risk'))
    throw new ApiError('TIER_FORBIDDEN', `The ${tier.id} tier does not include the 'risk' events.`, {
      tier: tier.id,
      category: 'risk',
    });
}

/**
 * Filters as stored: market ids and wallets lower-cased and checked, chains narrowed to the
 * tier's (none of them left: 400), lists deduplicated. `prefix`: where the filters were given
 * (`filters.` in a body, none in a query).
 */
export function normalizeFilters(raw: EventFilters, tier: Tier, prefix: string): EventFilters {
  const problems: ParameterProblem[] = [];
  const out: EventFilters = {};
  if (raw.chainIds) {
    const chains = [...new Set(raw.chainIds)];
    const tierChains = tier.chains;
    const allowed = tierChains === null ? chains : chains.filter((c) => tierChains.includes(c));
    if (allowed.length === 0)
      problems.push({
        parameter: `${prefix}chainIds`,
        problem: `none of these chains is in the ${tier.id} tier`,
      });
    out.chainIds = allowed;
  } else if (tier.chains !== null) out.chainIds = [...tier.chains];
  if (raw.protocols) out.protocols = [...new Set(raw.protocols)];
  if (raw.marketIds) {
    const keys: string[] = [];
    raw.marketIds.forEach((m, i) => {
      const id = parseMarketId(m);
      if (!id) problems.push({ parameter: `${prefix}marketIds[${i}]`, problem: MARKET_ID_PROBLEM });
      else keys.push(id.key);
    });
    out.marketIds = [...new Set(keys)];
  }
  if (raw.wallets) out.wallets = [...new Set(raw.wallets.map((w) => w.toLowerCase()))];
  if (raw.healthFactorBelow !== undefined) out.healthFactorBelow = raw.healthFactorBelow;
  if (problems.length > 0) throw invalidParameter(problems);
  return out;
}

export function webhookView(w: SubscriptionRecord) {
  return {
    id: w.id,
    url: w.url ?? '',
    events: w.events.filter((e): e is (typeof RISK_EVENT_TYPES)[number] => e !== 'ping'),
    filters: w.filters,
    createdAt: new Date(w.createdAt).toISOString(),
  };
}

const isoOrNull = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function deliveryView(d: DeliveryRecord) {
  return {
    id: d.id,
    eventId: d.eventId,
    eventType: d.eventType,
    status: d.status,
    attempts: d.attempts,
    lastStatus: d.lastStatus,
    lastError: d.lastError,
    nextAttemptAt: isoOrNull(d.nextAttemptAt),
    deliveredAt: isoOrNull(d.deliveredAt),
    createdAt: new Date(d.createdAt).toISOString(),
  };
}

export const WebhookIdPath = Type.Object({
  webhookId: Type.String({
    maxLength: 64,
    description: 'Id of the webhook.',
    examples: ['wh_4mQp8ZrT2vLx9KcB1nWd'],
  }),
});

export function webhookNotFound(id: string): ApiError {
  return new ApiError('WEBHOOK_NOT_FOUND', `No webhook '${id.slice(0, 64)}' on this account.`);
}
