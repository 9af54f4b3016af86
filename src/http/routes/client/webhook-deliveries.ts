import { Type } from '@fastify/type-provider-typebox';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { MetaRef } from '../../schemas.ts';
import type { Api } from '../types.ts';
import { DeliverySchema } from './schemas.ts';
import { ACCESS, clientMeta } from './shared.ts';
import { deliveryView, WebhookIdPath, webhookNotFound } from './webhooks-shared.ts';

const MAX = 100;
const DEFAULT = 20;

export function registerWebhookDeliveries(app: Api, deps: AppDeps): void {
  app.get(
    '/client/webhooks/:webhookId/deliveries',
    {
      config: { access: { ...ACCESS, limitMax: MAX }, errors: ['WEBHOOK_NOT_FOUND'] },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: "A webhook's deliveries",
        description:
          'The delivery log, newest event first: per event, its attempts, the last status and error, the next ' +
          'attempt and when it was delivered. Kept as long as the events (7 days by default).',
        params: WebhookIdPath,
        querystring: Type.Object(
          {
            limit: Type.Optional(
              Type.Integer({
                minimum: 1,
                description: `Deliveries per page (default ${DEFAULT}, at most ${MAX}).`,
              }),
            ),
            cursor: Type.Optional(
              Type.String({ maxLength: 64, description: 'From `meta.nextCursor` of the previous page.' }),
            ),
          },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({ data: Type.Array(DeliverySchema), meta: MetaRef }),
        },
      },
    },
    async (request) => {
      const { key } = callerOf(request);
      const w = await deps.events.webhooks.get(key, request.params.webhookId);
      if (!w) throw webhookNotFound(request.params.webhookId);
      const limit = Math.min(request.query.limit ?? DEFAULT, MAX);
      const list = await deps.events.webhooks.deliveries(w, limit, request.query.cursor);
      const meta = clientMeta(request);
      const last = list.at(-1);
      return {
        data: list.map(deliveryView),
        meta: list.length === limit && last ? { ...meta, nextCursor: last.id } : meta,
      };
    },
  );
}
