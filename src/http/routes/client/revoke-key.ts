import { Type } from '@fastify/type-provider-typebox';
import { must } from '../../../domain/must.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { ApiError } from '../../errors.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { KeySummarySchema } from './schemas.ts';
import { ACCESS, clientMeta, keySummary, manages } from './shared.ts';

export function registerRevokeKey(app: Api, deps: AppDeps): void {
  app.delete(
    '/client/api-keys/:keyId',
    {
      config: { access: ACCESS, errors: ['KEY_NOT_FOUND'] },
      schema: {
        operationId: 'revokeApiKey',
        summary: 'Revoke an API key',
        description:
          'The key is refused from its next request. A key may always revoke itself, and otherwise the keys it ' +
          'manages: those of your account of its tier or a lower one (Free < Pro < Enterprise), and for a test key ' +
          'only test keys. Any other key, of your account or not, is 404 `KEY_NOT_FOUND`, as a key that does not exist.',
        params: Type.Object({
          keyId: Type.String({
            maxLength: 64,
            description: 'Id of the key to revoke.',
            examples: ['key_3kTMd9WQx1nB7cVz2LpA'],
          }),
        }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ data: KeySummarySchema, meta: MetaRef }),
        },
      },
    },
    async (request) => {
      const { key } = callerOf(request);
      const target = await deps.store.getKey(request.params.keyId);
      if (!target || !manages(key, target)) {
        throw new ApiError('KEY_NOT_FOUND', `No API key '${request.params.keyId}' on this account.`);
      }
      if (target.revokedAt === null) await deps.keys.revoke(target.id);
      const after = must(await deps.store.getKey(target.id), `key ${target.id}`);
      return { data: keySummary(after), meta: clientMeta(request) };
    },
  );
}
