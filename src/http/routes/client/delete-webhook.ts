import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { WebhookSchema } from './schemas.ts';
import { ACCESS, clientMeta } from './shared.ts';
import { WebhookIdPath, webhookNotFound, webhookView } from './webhooks-shared.ts';

export function registerDeleteWebhook(app: Api, deps: AppDeps): void {
  app.delete(
    '/client/webhooks/:webhookId',
    {
      config: { access: ACCESS, errors: ['WEBHOOK_NOT_FOUND'] },
      schema: {
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook',
        description:
          'Nothing more is sent to it: deliveries still pending are marked failed. Answers the webhook as it was.',
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
      if (!w || !(await deps.events.webhooks.delete(key, w.id)))
        throw webhookNotFound(request.params.webhookId);
      return { data: webhookView(w), meta: clientMeta(request) };
    },
  );
}
