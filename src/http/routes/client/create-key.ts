import { Type } from '@fastify/type-provider-typebox';
import { IDEMPOTENCY_KEY_PATTERN } from '../../../access/idempotency.ts';
import { DAY_MS } from '../../../domain/periods.ts';
import type { KeyRecord } from '../../../domain/records/keys.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { ApiError, invalidParameter } from '../../errors.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { ACCESS, clientMeta } from './shared.ts';

export function registerCreateKey(app: Api, deps: AppDeps): void {
  app.post(
    '/client/api-keys',
    {
      config: {
        access: ACCESS,
        errors: [
          'PAYLOAD_TOO_LARGE',
          'UNSUPPORTED_MEDIA_TYPE',
          'KEY_LIMIT_REACHED',
          'KEY_CREATION_RATE_EXCEEDED',
          'IDEMPOTENCY_KEY_IN_USE',
          'IDEMPOTENCY_KEY_REUSED',
        ],
      },
      bodyLimit: 4096,
      schema: {
        operationId: 'createApiKey',
        summary: 'Create an API key',
        description:
          "Creates a key on your account with your key's tier. The response is the only time the whole key is shown. " +
          'A test key can create only test keys. An account may hold at most `maxKeysPerAccount` active keys of a tier ' +
          'and mode (Free 2, Pro 10, Enterprise 100: 403 `KEY_LIMIT_REACHED`) and create at most `keyCreationsPerDay` ' +
          'keys of a mode in any 24 hours (Free 5, Pro 20, Enterprise 100: 429 `KEY_CREATION_RATE_EXCEEDED` with ' +
          '`Retry-After`).\n\n' +
          'Send an `Idempotency-Key` to retry safely: the same key, from the same account and mode, with the same ' +
          'body within 24 hours gets the first answer again (the same status and body, the same key included, with ' +
          '`Idempotent-Replayed: true`) and creates nothing; with another body it is 422 `IDEMPOTENCY_KEY_REUSED`, and ' +
          'while the first request is still under way 409 `IDEMPOTENCY_KEY_IN_USE` with `Retry-After`. Only a created ' +
          'key is remembered: after an error, a retry with the same key runs afresh.',
        headers: Type.Object({
          'Idempotency-Key': Type.Optional(
            Type.String({
              pattern: IDEMPOTENCY_KEY_PATTERN,
              description:
                'Makes retries safe: 1 to 255 visible ASCII characters, unique per request (a UUID v4), kept 24 hours.',
              examples: ['7f9c1b2e-4d3a-4f7e-9a51-0c2b8e6d4a13'],
            }),
          ),
        }),
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
          201: Type.Object(
            {
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
            },
            {
              description: 'The key created, or the first answer again when an Idempotency-Key is replayed.',
              // With the headers of every client answer (routes/index.ts).
              headers: {
                'Idempotent-Replayed': {
                  type: 'string',
                  enum: ['true'],
                  description: 'On a replay (same Idempotency-Key and body): this is the first answer again.',
                },
              },
            },
          ),
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
      const idempotencyKey = request.headers['idempotency-key'];
      const started =
        idempotencyKey === undefined
          ? null
          : await deps.idempotency.start({ accountId: key.accountId, mode: key.mode }, idempotencyKey, {
              method: request.method,
              route: request.routeOptions.url ?? request.url,
              body,
            });
      if (started?.ok === false) {
        if (started.reason === 'REPLAY') {
          reply.header('idempotent-replayed', 'true');
          // Only a created key's answer is ever stored.
          reply.code(201);
          return started.body as CreatedAnswer;
        }
        if (started.reason === 'MISMATCH') {
          throw new ApiError(
            'IDEMPOTENCY_KEY_REUSED',
            'This Idempotency-Key was used with another request in the last 24 hours; use a new key for a new request.',
          );
        }
        throw keyInUse(started.retryAfterMs);
      }
      const ticket = started?.ticket;
      // The answer stored under the Idempotency-Key, sent as it was stored.
      const sent: { answer?: CreatedAnswer } = {};
      const created = await deps.keys
        .createWithin(
          { accountId: key.accountId, tier: key.tier, mode, name: body.name ?? null },
          {
            maxActive: tier.maxKeysPerAccount,
            maxCreations: tier.keyCreationsPerDay,
            creationsWindowMs: DAY_MS,
          },
          // Stored with the key, in its transaction: a key is never created without its answer.
          ticket &&
            ((c) => {
              sent.answer = createdAnswer(c.key, c.record, clientMeta(request));
              return ticket.answer(201, sent.answer);
            }),
        )
        .catch(async (err: unknown) => {
          // Whether the key was created is unknown: an answered claim is not released, an unanswered one is.
          await ticket?.release();
          throw err;
        });
      // Refused: nothing was created, nothing is remembered (a retry with the same key runs afresh).
      if (!created.ok) await ticket?.release();
      if (!created.ok && created.reason === 'TOO_MANY_KEYS') {
        throw new ApiError(
          'KEY_LIMIT_REACHED',
          `Your account holds ${created.active} active ${tier.name} ${mode} keys, the most the tier allows ` +
            `(${tier.maxKeysPerAccount}); revoke one to create another.`,
          { tier: tier.id, limit: tier.maxKeysPerAccount },
        );
      }
      if (!created.ok && created.reason === 'TOO_MANY_CREATIONS') {
        const retryMs = Math.max(1, Date.parse(created.freedBy) + DAY_MS - deps.clock.now());
        throw new ApiError(
          'KEY_CREATION_RATE_EXCEEDED',
          `Your account created ${created.created} ${mode} keys in the last 24 hours, the most the ${tier.name} tier ` +
            `allows (${tier.keyCreationsPerDay}); retry after ${Math.ceil(retryMs / 1000)} s.`,
          { limit: tier.keyCreationsPerDay, retryAfter: retryMs / 1000 },
          { 'retry-after': String(Math.max(1, Math.ceil(retryMs / 1000))) },
        );
      }
      // This request outlived its claim, which another request now holds: nothing was created.
      if (!created.ok) throw keyInUse(1000);
      reply.code(201);
      return sent.answer ?? createdAnswer(created.key, created.record, clientMeta(request));
    },
  );
}

interface CreatedAnswer {
  data: {
    id: string;
    key: string;
    prefix: string;
    mode: string;
    tier: string;
    name: string | null;
    createdAt: string;
  };
  meta: ReturnType<typeof clientMeta>;
}

/** The 201 answer: the new key, whole (the only time it is shown), and its record. */
function createdAnswer(key: string, r: KeyRecord, meta: ReturnType<typeof clientMeta>): CreatedAnswer {
  return {
    data: {
      id: r.id,
      key,
      prefix: r.prefix,
      mode: r.mode,
      tier: r.tier,
      name: r.name,
      createdAt: r.createdAt,
    },
    meta,
  };
}

/** 409: the Idempotency-Key is held by a request under way, at most `retryAfterMs` more. */
function keyInUse(retryAfterMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(retryAfterMs / 1000));
  return new ApiError(
    'IDEMPOTENCY_KEY_IN_USE',
    `A request with this Idempotency-Key is still under way; retry after ${seconds} s.`,
    {},
    { 'retry-after': String(seconds) },
  );
}
