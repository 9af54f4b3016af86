import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { PeriodSchema } from './schemas.ts';
import { ACCESS, clientMeta } from './shared.ts';

export function registerQuota(app: Api, deps: AppDeps): void {
  app.get(
    '/client/quota',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'getQuota',
        summary: 'Quota dashboard',
        description: "The calling key's current limits, usage, remaining requests and reset times.",
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({
            data: Type.Object({
              tier: Type.Object({ id: Type.String(), name: Type.String() }),
              rateLimit: Type.Object({
                perSecond: Type.Integer(),
                remaining: Type.Integer(),
                resetAt: Type.Integer({ description: 'Unix ms when the oldest request leaves the window.' }),
              }),
              daily: PeriodSchema,
              monthly: PeriodSchema,
              resultCap: Type.Unsafe<number | null>({
                type: ['integer', 'null'],
                description: 'null = no tier cap.',
              }),
              categories: Type.Array(Type.String()),
              chains: Type.Unsafe<number[] | null>({
                type: ['array', 'null'],
                items: { type: 'integer' },
                description: 'null = every chain.',
              }),
              historyDays: Type.Unsafe<number | null>({
                type: ['integer', 'null'],
                description: 'null = unlimited.',
              }),
            }),
            meta: MetaRef,
          }),
        },
      },
    },
    async (request) => {
      const { key, tier } = callerOf(request);
      const nowMs = deps.clock.now();
      const s = await deps.admission.status(key.id, tier, nowMs);
      const period = (limit: number | null, used: number, resetAt: number) => ({
        limit,
        used,
        remaining: limit === null ? null : Math.max(0, limit - used),
        resetAt: new Date(resetAt).toISOString(),
      });
      return {
        data: {
          tier: { id: tier.id, name: tier.name },
          rateLimit: {
            perSecond: tier.ratePerSecond,
            remaining: s.rate.remaining,
            resetAt: Math.ceil(s.rate.resetAt),
          },
          daily: period(tier.dailyQuota, s.dayUsed, s.dayResetAt),
          monthly: period(tier.monthlyQuota, s.monthUsed, s.monthResetAt),
          resultCap: tier.resultCap,
          categories: [...tier.categories],
          chains: tier.chains === null ? null : [...tier.chains],
          historyDays: tier.historyDays,
        },
        meta: clientMeta(request),
      };
    },
  );
}
