import { Type } from '@fastify/type-provider-typebox';
import { DAY_MS } from '../../../domain/periods.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { ApiError, invalidParameter } from '../../errors.ts';
import { errorResponses, MetaRef } from '../../schemas.ts';
import { type Api, CLIENT_ERRORS } from '../types.ts';
import { ACCESS, clientMeta, SECURITY } from './shared.ts';

export function registerCreateKey(app: Api, deps: AppDeps): void {
  app.post(
    '/client/api-keys',
    {
      config: { access: ACCESS },
      bodyLimit: 4096,
      schema: {
        operationId: 'createApiKey',
        tags: ['Client'],
        summary: 'Create an API key',
        description:
          "Creates a key on your account with your key's tier. The response is the only time the whole key is shown. " +
          'A test key can create only test keys. An account may hold at most `maxKeysPerAccount` active keys of a tier ' +
          'and mode (Free 2, Pro 10, Enterprise 100: 403 `KEY_LIMIT_REACHED`) and create at most `keyCreationsPerDay` ' +
          'keys of a mode in any 24 hours (Free 5, Pro 20, Enterprise 100: 429 `KEY_CREATION_RATE_EXCEEDED` with ' +
          '`Retry-After`).',
        security: SECURITY,
        body: Type.Optional(
          Type.Object(
            {
              name: Type.Optional(
                Type.String({ minLength: 1, maxLength: 100, description: 'A label for the key.' }),
              ),
              mode: Type.Optional(
                Type.Unsafe<'live' | 'test'>({
                  type: 'string',
                  enum: ['live', 'test'],
                  description: "Default: the calling key's mode.",
                }),
              ),
            },
            { additionalProperties: false },
          ),
        ),
        response: {
          201: Type.Object({
            data: Type.Object({
              id: Type.String(),
              key: Type.String({ description: 'The whole key. Store it now: it is never shown again.' }),
              prefix: Type.String(),
              mode: Type.String(),
              tier: Type.String(),
              name: Type.Unsafe<string | null>({ type: ['string', 'null'] }),
              createdAt: Type.String(),
            }),
            meta: MetaRef,
          }),
          ...errorResponses([
            'INVALID_PARAMETER',
            'PAYLOAD_TOO_LARGE',
            'UNSUPPORTED_MEDIA_TYPE',
            'KEY_LIMIT_REACHED',
            'KEY_CREATION_RATE_EXCEEDED',
            ...CLIENT_ERRORS,
          ]),
        },
      },
    },
    async (request, reply) => {
      const { key } = callerOf(request);
      const body = request.body ?? {};
      const mode = body.mode ?? key.mode;
      if (key.mode === 'test' && mode === 'live') {
        throw invalidParameter([{ parameter: 'mode', problem: 'a test key can create only test keys' }]);
      }
      const tier = callerOf(request).tier;
      const created = await deps.keys.createWithin(
        { accountId: key.accountId, tier: key.tier, mode, name: body.name ?? null },
        {
          maxActive: tier.maxKeysPerAccount,
          maxCreations: tier.keyCreationsPerDay,
          creationsWindowMs: DAY_MS,
        },
      );
      if (!created.ok && created.reason === 'TOO_MANY_KEYS') {
        throw new ApiError(
          'KEY_LIMIT_REACHED',
          `Your account holds ${created.active} active ${tier.name} ${mode} keys, the most the tier allows ` +
            `(${tier.maxKeysPerAccount}); revoke one to create another.`,
          { tier: tier.id, limit: tier.maxKeysPerAccount },
        );
      }
      if (!created.ok) {
        const retryMs = Math.max(1, Date.parse(created.freedBy) + DAY_MS - deps.clock.now());
        throw new ApiError(
          'KEY_CREATION_RATE_EXCEEDED',
          `Your account created ${created.created} ${mode} keys in the last 24 hours, the most the ${tier.name} tier ` +
            `allows (${tier.keyCreationsPerDay}); retry after ${Math.ceil(retryMs / 1000)} s.`,
          { limit: tier.keyCreationsPerDay, retryAfter: retryMs / 1000 },
          { 'retry-after': String(Math.max(1, Math.ceil(retryMs / 1000))) },
        );
      }
      const r = created.record;
      reply.code(201);
      return {
        data: {
          id: r.id,
          key: created.key,
          prefix: r.prefix,
          mode: r.mode,
          tier: r.tier,
          name: r.name,
          createdAt: r.createdAt,
        },
        meta: clientMeta(request),
      };
    },
  );
}
