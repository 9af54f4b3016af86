import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { WebhookSchema } from './schemas.ts';
import { ACCESS, clientMeta } from './shared.ts';
import { webhookView } from './webhooks-shared.ts';

export function registerListWebhooks(app: Api, deps: AppDeps): void {
  app.get(
    '/client/webhooks',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listWebhooks',
        summary: "Your account's webhooks",
        description:
          "The account's webhooks of the calling key's mode, oldest first. Secrets are never shown again.",
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ data: Type.Array(WebhookSchema), meta: MetaRef }),
        },
      },
    },
    async (request) => {
      const { key } = callerOf(request);
      const list = await deps.events.webhooks.list({ accountId: key.accountId, mode: key.mode });
      return { data: list.map(webhookView), meta: clientMeta(request) };
    },
  );
}
