import { Type } from '@fastify/type-provider-typebox';
import { clampStartDate } from '../../access/clamp.ts';
import { DAY_MS, utcDay } from '../../domain/periods.ts';
import type { KeyRecord } from '../../store/types.ts';
import type { AppDeps } from '../context.ts';
import { callerOf } from '../context.ts';
import { latencyMs } from '../envelope.ts';
import { ApiError, invalidParameter } from '../errors.ts';
import { parseDate, StartDateParam } from '../params.ts';
import { errorResponses, MetaSchema } from '../schemas.ts';
import { type Api, CLIENT_ERRORS } from './types.ts';

/** Client routes answer from the account's own records, read now: always `live`. */
function clientMeta(request: Parameters<typeof latencyMs>[0]) {
  return {
    latencyMs: latencyMs(request),
    freshness: 'live' as const,
    source: 'account',
    ...(request.clamped ? { clamped: request.clamped } : {}),
  };
}

const ACCESS = { category: null, counted: false } as const;

const KeySummarySchema = Type.Object({
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

/**
 * Whether the calling key may see and revoke `target`: a key of its own account, and a test key
 * only test keys (it can neither list nor revoke the account's live keys).
 */
function manages(caller: KeyRecord, target: KeyRecord): boolean {
  return target.accountId === caller.accountId && (caller.mode === 'live' || target.mode === 'test');
}

function keySummary(k: KeyRecord) {
  return {
    id: k.id,
    prefix: k.prefix,
    mode: k.mode,
    tier: k.tier,
    name: k.name,
    createdAt: k.createdAt,
    revokedAt: k.revokedAt,
  };
}

const PeriodSchema = Type.Object({
  limit: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'null = unlimited.' }),
  used: Type.Integer(),
  remaining: Type.Unsafe<number | null>({ type: ['integer', 'null'], description: 'null = unlimited.' }),
  resetAt: Type.String({ description: 'ISO 8601 UTC instant when the counter restarts at 0.' }),
});

export function registerClientRoutes(app: Api, deps: AppDeps): void {
  const security = [{ bearerAuth: [] }];

  app.get(
    '/client/profile',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'getProfile',
        tags: ['Client'],
        summary: 'Your account and the calling key',
        security,
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
            meta: MetaSchema,
          }),
          ...errorResponses(CLIENT_ERRORS),
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

  app.get(
    '/client/api-keys',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listApiKeys',
        tags: ['Client'],
        summary: "Your account's API keys",
        description:
          'Active and revoked keys of the account (a test key sees only test keys). The whole key is never shown again after creation.',
        security,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ data: Type.Array(KeySummarySchema), meta: MetaSchema }),
          ...errorResponses(CLIENT_ERRORS),
        },
      },
    },
    async (request) => {
      const { key } = callerOf(request);
      const keys = await deps.store.listKeys(key.accountId);
      return { data: keys.filter((k) => manages(key, k)).map(keySummary), meta: clientMeta(request) };
    },
  );

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
        security,
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
            meta: MetaSchema,
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

  app.delete(
    '/client/api-keys/:keyId',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'revokeApiKey',
        tags: ['Client'],
        summary: 'Revoke an API key',
        description:
          'The key is refused from its next request. Revoking the calling key itself is allowed. ' +
          'A test key can revoke only test keys: a live key of the account is 404 to it.',
        security,
        params: Type.Object({
          keyId: Type.String({
            maxLength: 64,
            description: 'Id of the key to revoke.',
            examples: ['key_3kTMd9WQx1nB7cVz2LpA'],
          }),
        }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ data: KeySummarySchema, meta: MetaSchema }),
          ...errorResponses(['KEY_NOT_FOUND', ...CLIENT_ERRORS]),
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
      const after = (await deps.store.getKey(target.id))!;
      return { data: keySummary(after), meta: clientMeta(request) };
    },
  );

  app.get(
    '/client/usage',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'getUsage',
        tags: ['Client'],
        summary: 'Requests per UTC day and endpoint',
        description:
          "Counted requests of the calling key per UTC day and endpoint, from `startDate` (raised to the tier's history window) to today.",
        security,
        querystring: Type.Object(
          { startDate: Type.Optional(StartDateParam) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            data: Type.Array(
              Type.Object({
                date: Type.String({ description: 'UTC day, YYYY-MM-DD.' }),
                requests: Type.Integer(),
                endpoints: Type.Array(Type.Object({ endpoint: Type.String(), requests: Type.Integer() })),
              }),
            ),
            meta: MetaSchema,
          }),
          ...errorResponses(['INVALID_PARAMETER', ...CLIENT_ERRORS]),
        },
      },
    },
    async (request) => {
      const { key, tier } = callerOf(request);
      const nowMs = deps.clock.now();
      const requested = parseDate(request.query.startDate, 'startDate');
      const start = clampStartDate(requested, tier, nowMs);
      if (start.clamp) request.clamped = { startDate: start.clamp };
      // Unlimited history without a startDate: the last 365 days.
      const fromMs = start.applied ?? nowMs - 365 * DAY_MS;
      const rows = await deps.store.usageByDay(key.id, utcDay(fromMs), utcDay(nowMs));
      const days = new Map<
        string,
        { date: string; requests: number; endpoints: { endpoint: string; requests: number }[] }
      >();
      for (const r of rows) {
        let d = days.get(r.day);
        if (!d) {
          d = { date: r.day, requests: 0, endpoints: [] };
          days.set(r.day, d);
        }
        d.requests += r.requests;
        d.endpoints.push({ endpoint: r.endpoint, requests: r.requests });
      }
      return { data: [...days.values()], meta: clientMeta(request) };
    },
  );

  app.get(
    '/client/quota',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'getQuota',
        tags: ['Client'],
        summary: 'Quota dashboard',
        description: "The calling key's current limits, usage, remaining requests and reset times.",
        security,
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
            meta: MetaSchema,
          }),
          ...errorResponses(CLIENT_ERRORS),
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
