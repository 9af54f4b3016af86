import { randomBytes } from 'node:crypto';
import type { Clock } from '../domain/clock.ts';
import type {
  DeliveryRecord,
  EventFilters,
  EventType,
  SubscriptionRecord,
} from '../domain/records/events.ts';
import { deliveryId } from '../store/events.ts';
import type { EventStore } from '../store/ports/events.ts';
import { eventBody } from './matcher.ts';
import { newWebhookSecret, type SecretBox } from './secrets.ts';
import { checkWebhookUrl, type Resolver } from './ssrf.ts';

export interface WebhookInput {
  url: string;
  events: EventType[];
  filters: EventFilters;
}

export type WebhookCreation =
  | { ok: true; webhook: SubscriptionRecord; secret: string }
  | { ok: false; reason: 'URL'; problem: string }
  | { ok: false; reason: 'TOO_MANY'; active: number };

/** Ids: a prefix and 20 random base62-ish characters (base64url without - and _). */
function newId(prefix: string): string {
  return `${prefix}_${randomBytes(24).toString('base64url').replace(/[-_]/g, '').slice(0, 20)}`;
}

/**
 * Webhooks of the client area: created with a secret shown once (sealed at rest), listed,
 * deleted, pinged; their deliveries read from the outbox.
 */
export class WebhookService {
  private readonly store: EventStore;
  private readonly secrets: SecretBox;
  private readonly clock: Clock;
  private readonly allowPrivate: boolean;
  private readonly resolve: Resolver | undefined;
  /** Called once an event is stored for delivery (a delivery pass soon). */
  private readonly kick: () => void;

  constructor(o: {
    store: EventStore;
    secrets: SecretBox;
    clock: Clock;
    allowPrivate: boolean;
    resolve?: Resolver;
    kick?: () => void;
  }) {
    this.store = o.store;
    this.secrets = o.secrets;
    this.clock = o.clock;
    this.allowPrivate = o.allowPrivate;
    this.resolve = o.resolve;
    this.kick = o.kick ?? (() => {});
  }

  /** Whether `http` and private addresses are allowed (the development switch). */
  get allowsPrivate(): boolean {
    return this.allowPrivate;
  }

  async create(
    owner: { accountId: string; mode: 'live' | 'test' },
    input: WebhookInput,
    maxActive: number | null,
  ): Promise<WebhookCreation> {
    const checked = await checkWebhookUrl(input.url, {
      allowPrivate: this.allowPrivate,
      ...(this.resolve ? { resolve: this.resolve } : {}),
    });
    if (!checked.ok) return { ok: false, reason: 'URL', problem: checked.problem };
    const secret = newWebhookSecret();
    const webhook: SubscriptionRecord = {
      id: newId('wh'),
      accountId: owner.accountId,
      mode: owner.mode,
      kind: 'webhook',
      url: checked.url.toString(),
      events: [...new Set(input.events)],
      filters: input.filters,
      sealedSecret: this.secrets.seal(secret),
      createdAt: Math.floor(this.clock.now()),
      expiresAt: null,
    };
    const created = await this.store.createSubscription(webhook, maxActive);
    if (!created.ok) return created;
    return { ok: true, webhook, secret };
  }

  list(owner: { accountId: string; mode: 'live' | 'test' }): Promise<SubscriptionRecord[]> {
    return this.store.listWebhooks(owner.accountId, owner.mode);
  }

  /** The account's webhook of that mode, or null. */
  async get(
    owner: { accountId: string; mode: 'live' | 'test' },
    id: string,
  ): Promise<SubscriptionRecord | null> {
    const w = await this.store.getSubscription(id);
    return w && w.kind === 'webhook' && w.accountId === owner.accountId && w.mode === owner.mode ? w : null;
  }

  delete(owner: { accountId: string }, id: string): Promise<boolean> {
    return this.store.deleteWebhook(owner.accountId, id, Math.floor(this.clock.now()));
  }

  /** Stores a `ping` for the webhook and its delivery (attempted at once, retried like any other). */
  async ping(w: SubscriptionRecord): Promise<{ eventId: string; deliveryId: string }> {
    const id = newId('evt');
    const now = Math.floor(this.clock.now());
    await this.store.appendEvents(
      [
        {
          id,
          mode: w.mode,
          type: 'ping',
          createdAt: now,
          body: eventBody(id, 'ping', now, {
            webhookId: w.id,
            message: 'A test event sent from the client area.',
          }),
          chainId: null,
          protocol: null,
          marketKey: null,
          wallet: null,
          threshold: null,
          webhookId: w.id,
        },
      ],
      [{ eventId: id, webhookId: w.id }],
    );
    this.kick();
    return { eventId: id, deliveryId: deliveryId(w.id, id) };
  }

  deliveries(w: SubscriptionRecord, limit: number, before?: string): Promise<DeliveryRecord[]> {
    return this.store.listDeliveries(w.id, limit, before);
  }
}
