import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { KeySummarySchema } from './schemas.ts';
import { ACCESS, clientMeta, keySummary, manages } from './shared.ts';

export function registerListKeys(app: Api, deps: AppDeps): void {
  app.get(
    '/client/api-keys',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listApiKeys',
        summary: "Your account's API keys",
        description:
          'The active and revoked keys of your account that the calling key manages: itself, and the keys of its tier ' +
          'or a lower one (Free < Pro < Enterprise); a test key manages only test keys. Other keys of the account are ' +
          'not listed. The whole key is never shown again after creation.',
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ data: Type.Array(KeySummarySchema), meta: MetaRef }),
        },
      },
    },
    async (request) => {
      const { key } = callerOf(request);
      const keys = await deps.store.listKeys(key.accountId);
      return { data: keys.filter((k) => manages(key, k)).map(keySummary), meta: clientMeta(request) };
    },
  );
}
