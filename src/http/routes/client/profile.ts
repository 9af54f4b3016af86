import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { KeySummarySchema } from './schemas.ts';
import { ACCESS, clientMeta, keySummary } from './shared.ts';

export function registerProfile(app: Api, deps: AppDeps): void {
  app.get(
    '/client/profile',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'getProfile',
        summary: 'Your account and the calling key',
        description:
          'The account the calling key belongs to (name, email, creation time), the key itself (never the whole key) and its tier.',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({
            data: Type.Object({
              account: Type.Object({
                id: Type.String(),
                name: Type.String(),
                email: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
                createdAt: Type.String(),
              }),
              key: KeySummarySchema,
              tier: Type.Object({ id: Type.String(), name: Type.String() }),
            }),
            meta: MetaRef,
          }),
        },
      },
    },
    async (request) => {
      const { key, tier } = callerOf(request);
      const account = await deps.store.getAccount(key.accountId);
      if (!account) throw new Error(`key ${key.id} belongs to a missing account`);
      return {
        data: { account, key: keySummary(key), tier: { id: tier.id, name: tier.name } },
        meta: clientMeta(request),
      };
    },
  );
}
