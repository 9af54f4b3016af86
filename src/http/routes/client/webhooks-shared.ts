import { Type } from '@fastify/type-provider-typebox';
import type { Tier } from '../../../access/tiers.ts';
import { PROTOCOLS, type Protocol } from '../../../domain/enums.ts';
import { MARKET_ID_PROBLEM, parseMarketId } from '../../../domain/market-id.ts';
import type {
  DeliveryRecord,
  EventFilters,
  EventType,
  SubscriptionRecord,
} from '../../../domain/records/events.ts';
import { DEFAULT_HEALTH_FACTOR_BELOW } from '../../../events/filters.ts';
import { ApiError, invalidParameter, type ParameterProblem } from '../../errors.ts';

/** The events a webhook or a stream may ask for (`ping` is sent by the test route only). */
export const RISK_EVENT_TYPES = [
  'position.health_factor_below',
  'position.liquidated',
  'oracle.stale',
  'oracle.recovered',
] as const satisfies readonly EventType[];

export const EventTypeSchema = Type.Unsafe<(typeof RISK_EVENT_TYPES)[number]>({
  type: 'string',
  enum: [...RISK_EVENT_TYPES],
});

const MAX_LISTED = 1000;

export const FiltersSchema = Type.Object(
  {
    chainIds: Type.Optional(
      Type.Array(Type.Integer({ minimum: 1, maximum: 999_999_999_999 }), {
        minItems: 1,
        maxItems: 50,
        description: 'Only events on these chains.',
      }),
    ),
    protocols: Type.Optional(
      Type.Array(Type.Unsafe<Protocol>({ type: 'string', enum: [...PROTOCOLS] }), {
        minItems: 1,
        maxItems: PROTOCOLS.length,
        description: 'Only events about markets of these protocols (an oracle: one pricing such a market).',
      }),
    ),
    marketIds: Type.Optional(
      Type.Array(Type.String({ maxLength: 256 }), {
        minItems: 1,
        maxItems: MAX_LISTED,
        description: 'Only events about these markets (uniqueKeys; an oracle: one pricing such a market).',
      }),
    ),
    wallets: Type.Optional(
      Type.Array(Type.String({ pattern: '^0x[0-9a-fA-F]{40}$' }), {
        minItems: 1,
        maxItems: MAX_LISTED,
        description: 'Only position events of these wallets.',
      }),
    ),
    healthFactorBelow: Type.Optional(
      Type.Number({
        exclusiveMinimum: 0,
        maximum: 10,
        description: `position.health_factor_below fires when a health factor crosses below this (default ${DEFAULT_HEALTH_FACTOR_BELOW}), and again only after it was back above it by 1 % or more.`,
      }),
    ),
  },
  {
    additionalProperties: false,
    description:
      'Every filter given must match. Filters an event has nothing for do not narrow it (an oracle event has no wallet).',
  },
);

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
    const allowed = tier.chains === null ? chains : chains.filter((c) => tier.chains!.includes(c));
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

export const WebhookSchema = Type.Object({
  id: Type.String({ examples: ['wh_4mQp8ZrT2vLx9KcB1nWd'] }),
  url: Type.String({ examples: ['https://hooks.example.com/lrds'] }),
  events: Type.Array(EventTypeSchema),
  filters: FiltersSchema,
  createdAt: Type.String({ description: 'ISO 8601 UTC.' }),
});

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
const NullableString = (description: string) =>
  Type.Unsafe<string | null>({ type: ['string', 'null'], description });

export const DeliverySchema = Type.Object({
  id: Type.String({ examples: ['dlv_3f9a0c1d2e4b5a6978c0d1e2'] }),
  eventId: Type.String({ examples: ['evt_8b1f0e2d3c4a5b6978d0e1f2'] }),
  eventType: Type.Unsafe<EventType>({ type: 'string', enum: [...RISK_EVENT_TYPES, 'ping'] }),
  status: Type.Unsafe<'pending' | 'delivered' | 'failed'>({
    type: 'string',
    enum: ['pending', 'delivered', 'failed'],
    description:
      'pending: to be attempted (again); delivered: a 2xx came back; failed: given up after 24 hours.',
  }),
  attempts: Type.Integer({ description: 'Attempts made.' }),
  lastStatus: Type.Unsafe<number | null>({
    type: ['integer', 'null'],
    description:
      'HTTP status of the last attempt; null when it got none (timeout, connection refused, URL refused).',
  }),
  lastError: NullableString('Why the last attempt failed; null when it did not.'),
  nextAttemptAt: NullableString('ISO 8601 UTC of the next attempt; null once delivered or failed.'),
  deliveredAt: NullableString('ISO 8601 UTC; null until delivered.'),
  createdAt: Type.String({ description: 'ISO 8601 UTC: when the event was created.' }),
});

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
