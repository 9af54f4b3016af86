import type { Clock } from '../domain/clock.ts';
import type { EventStore } from '../store/ports/events.ts';
import type { SecretBox } from './secrets.ts';
import type { Resolver } from './ssrf.ts';
import { StreamHub } from './stream.ts';
import { WebhookService } from './webhooks.ts';

/** What the HTTP layer uses of the risk events: the client area's webhooks and the event streams. */
export interface EventsApi {
  webhooks: WebhookService;
  streams: StreamHub;
}

export function createEventsApi(o: {
  store: EventStore;
  secrets: SecretBox;
  clock: Clock;
  allowPrivate: boolean;
  resolve?: Resolver;
  /** A delivery pass soon (an event was stored for delivery). */
  kick?: () => void;
  /** Stream polls and keep-alives, ms (defaults: 250 and 15,000). */
  pollMs?: number;
  keepAliveMs?: number;
  onError?: (err: unknown) => void;
}): EventsApi {
  return {
    webhooks: new WebhookService(o),
    streams: new StreamHub({
      store: o.store,
      clock: o.clock,
      ...(o.pollMs ? { pollMs: o.pollMs } : {}),
      ...(o.keepAliveMs ? { keepAliveMs: o.keepAliveMs } : {}),
      ...(o.onError ? { onError: o.onError } : {}),
    }),
  };
}
