import { Type } from '@fastify/type-provider-typebox';
import { PROTOCOLS, type Protocol } from '../../../domain/enums.ts';
import type { EventType } from '../../../domain/records/events.ts';
import { DEFAULT_HEALTH_FACTOR_BELOW } from '../../../events/filters.ts';
import { RISK_EVENT_TYPES } from './webhooks-shared.ts';

/** The client area's schemas: a key, a quota period, a webhook and its deliveries. */

export const KeySummarySchema = Type.Object({
  id: Type.String({ examples: ['key_3kTMd9WQx1nB7cVz2LpA'] }),
  prefix: Type.String({ description: 'First 14 characters of the key.', examples: ['lrds_live_AbCd'] }),
  mode: Type.Unsafe<'live' | 'test'>({ type: 'string', enum: ['live', 'test'] }),
  tier: Type.String({ examples: ['pro'] }),
  name: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
  createdAt: Type.String({ description: 'ISO 8601 UTC.' }),
  revokedAt: Type.Unsafe<string | null>({
    type: ['string', 'null'],
    description: 'ISO 8601 UTC; null while active.',
  }),
});

export const PeriodSchema = Type.Object({
  limit: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'null = unlimited.' }),
  used: Type.Integer(),
  remaining: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'null = unlimited.' }),
  resetAt: Type.String({ description: 'ISO 8601 UTC instant when the counter restarts at 0.' }),
});

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

export const WebhookSchema = Type.Object({
  id: Type.String({ examples: ['wh_4mQp8ZrT2vLx9KcB1nWd'] }),
  url: Type.String({ examples: ['https://hooks.example.com/lrds'] }),
  events: Type.Array(EventTypeSchema),
  filters: FiltersSchema,
  createdAt: Type.String({ description: 'ISO 8601 UTC.' }),
});

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
