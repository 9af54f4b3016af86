import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { ApiError, invalidParameter } from '../../errors.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { EventTypeSchema, FiltersSchema, WebhookSchema } from './schemas.ts';
import { ACCESS, clientMeta } from './shared.ts';
import { normalizeFilters, RISK_EVENT_TYPES, requireRisk, webhookView } from './webhooks-shared.ts';

export function registerCreateWebhook(app: Api, deps: AppDeps): void {
  app.post(
    '/client/webhooks',
    {
      config: {
        access: ACCESS,
        errors: ['PAYLOAD_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE', 'TIER_FORBIDDEN', 'WEBHOOK_LIMIT_REACHED'],
      },
      bodyLimit: 128 * 1024,
      // The tier is checked before the body (category access comes before parameter validation).
      preValidation: async (request) => requireRisk(callerOf(request).tier),
      schema: {
        operationId: 'createWebhook',
        summary: 'Create a webhook',
        description:
          'Subscribes a URL to risk events: each matching event is POSTed to it as JSON, signed with the ' +
          'webhook\'s secret in `LRDS-Signature` (`t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">`), with ' +
          'its id in `LRDS-Event-Id`. A 2xx answer within 10 s delivers it; anything else is retried with exponential ' +
          'backoff for 24 hours. The response is the only time the secret is shown.\n\n' +
          "Needs the tier's `risk` category (403 `TIER_FORBIDDEN`); an account holds at most `maxWebhooksPerAccount` " +
          'webhooks per mode (Pro 10, Enterprise 100: 403 `WEBHOOK_LIMIT_REACHED`). The URL must be `https` and ' +
          'resolve to public addresses only (no private, loopback, link-local or reserved address, IPv4 or IPv6); it ' +
          'is checked again before every delivery. A test key subscribes to the events of the sandbox served to test keys.',
        body: Type.Object(
          {
            url: Type.String({ minLength: 1, maxLength: 2048, examples: ['https://hooks.example.com/lrds'] }),
            events: Type.Array(EventTypeSchema, { minItems: 1, maxItems: RISK_EVENT_TYPES.length }),
            filters: Type.Optional(FiltersSchema),
          },
          { additionalProperties: false },
        ),
        response: {
          201: Type.Object({
            data: Type.Object({
              ...WebhookSchema.properties,
              secret: Type.String({
                description: 'The signing secret (`whsec_…`). Store it now: it is never shown again.',
              }),
            }),
            meta: MetaRef,
          }),
        },
      },
    },
    async (request, reply) => {
      const { key, tier } = callerOf(request);
      const filters = normalizeFilters(request.body.filters ?? {}, tier, 'filters.');
      const created = await deps.events.webhooks.create(
        { accountId: key.accountId, mode: key.mode },
        { url: request.body.url, events: request.body.events, filters },
        tier.maxWebhooksPerAccount,
      );
      if (!created.ok && created.reason === 'URL')
        throw invalidParameter([{ parameter: 'url', problem: created.problem }]);
      if (!created.ok)
        throw new ApiError(
          'WEBHOOK_LIMIT_REACHED',
          `Your account holds ${created.active} ${key.mode} webhooks, the most the ${tier.name} tier allows ` +
            `(${tier.maxWebhooksPerAccount}); delete one to create another.`,
          { tier: tier.id, limit: tier.maxWebhooksPerAccount },
        );
      reply.code(201);
      return { data: { ...webhookView(created.webhook), secret: created.secret }, meta: clientMeta(request) };
    },
  );
}
