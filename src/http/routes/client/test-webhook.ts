import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { ACCESS, clientMeta } from './shared.ts';
import { WebhookIdPath, webhookNotFound } from './webhooks-shared.ts';

export function registerTestWebhook(app: Api, deps: AppDeps): void {
  app.post(
    '/client/webhooks/:webhookId/test',
    {
      config: { access: ACCESS, errors: ['WEBHOOK_NOT_FOUND'] },
      bodyLimit: 1024,
      schema: {
        operationId: 'testWebhook',
        summary: 'Send a test event',
        description:
          'Stores a `ping` event for this webhook and delivers it at once, signed like every event (and retried ' +
          "like any). Follow it in the webhook's deliveries.",
        params: WebhookIdPath,
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          202: Type.Object(
            {
              data: Type.Object({
                eventId: Type.String({ examples: ['evt_8b1f0e2d3c4a5b6978d0'] }),
                deliveryId: Type.String({ examples: ['dlv_3f9a0c1d2e4b5a6978c0d1e2'] }),
              }),
              meta: MetaRef,
            },
            { description: 'The ping is stored and on its way.' },
          ),
        },
      },
    },
    async (request, reply) => {
      const { key } = callerOf(request);
      const w = await deps.events.webhooks.get(key, request.params.webhookId);
      if (!w) throw webhookNotFound(request.params.webhookId);
      const sent = await deps.events.webhooks.ping(w);
      reply.code(202);
      return { data: sent, meta: clientMeta(request) };
    },
  );
}
