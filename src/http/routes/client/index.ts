import type { Area } from '../types.ts';
import { registerCreateKey } from './create-key.ts';
import { registerCreateWebhook } from './create-webhook.ts';
import { registerDeleteWebhook } from './delete-webhook.ts';
import { registerGetWebhook } from './get-webhook.ts';
import { registerListKeys } from './list-keys.ts';
import { registerListWebhooks } from './list-webhooks.ts';
import { registerProfile } from './profile.ts';
import { registerQuota } from './quota.ts';
import { registerRevokeKey } from './revoke-key.ts';
import { registerTestWebhook } from './test-webhook.ts';
import { registerUsage } from './usage.ts';
import { registerWebhookDeliveries } from './webhook-deliveries.ts';

/** Self-service routes of a key holder: rate limited, never counted, open to every tier. */
export const client: Area = {
  scope: 'client',
  tag: {
    name: 'Client',
    description: 'Self-service: your account, keys, usage and quota. Not counted toward quotas.',
  },
  register(app, deps) {
    registerProfile(app, deps);
    registerListKeys(app, deps);
    registerCreateKey(app, deps);
    registerRevokeKey(app, deps);
    registerUsage(app, deps);
    registerQuota(app, deps);
    registerListWebhooks(app, deps);
    registerCreateWebhook(app, deps);
    registerGetWebhook(app, deps);
    registerDeleteWebhook(app, deps);
    registerTestWebhook(app, deps);
    registerWebhookDeliveries(app, deps);
  },
};
