import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { WebhookSchema } from './schemas.ts';
import { ACCESS, clientMeta } from './shared.ts';
import { WebhookIdPath, webhookNotFound, webhookView } from './webhooks-shared.ts';

export function registerGetWebhook(app: Api, deps: AppDeps): void {
  app.get(
    '/client/webhooks/:webhookId',
    {
      config: { access: ACCESS, errors: ['WEBHOOK_NOT_FOUND'] },
      schema: {
        operationId: 'getWebhook',
        summary: 'One webhook',
        description: "A webhook of the account (of the calling key's mode). Its secret is never shown again.",
        params: WebhookIdPath,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: Type.Object({ data: WebhookSchema, meta: MetaRef }),
        },
      },
    },
    async (request) => {
      const { key } = callerOf(request);
      const w = await deps.events.webhooks.get(key, request.params.webhookId);
      if (!w) throw webhookNotFound(request.params.webhookId);
      return { data: webhookView(w), meta: clientMeta(request) };
    },
  );
}
