import type { EventFilters, EventType, SubscriptionRecord } from '../domain/records/events.ts';

/** The threshold of health-factor events when a subscription gives none (as positions at risk default to). */
export const DEFAULT_HEALTH_FACTOR_BELOW = 1.1;
/** A position is armed again for a threshold once its health factor is back above it by this factor (1 %). */
export const REARM_FACTOR = 1.01;

/** What an event is about, for filters: a filter a kind of event has nothing for does not narrow it. */
export interface EventAttributes {
  type: EventType;
  chainId: number | null;
  /** The protocols and markets the event is about (an oracle: those of the markets it prices). */
  protocols: readonly string[];
  marketKeys: readonly string[];
  wallet: string | null;
  /** A health-factor event's threshold. */
  threshold: number | null;
}

/** A subscription as the matcher holds it. */
export interface Subscriber {
  id: string;
  kind: 'webhook' | 'stream';
  createdAt: number;
  types: ReadonlySet<EventType>;
  filters: EventFilters;
  /** position.health_factor_below's threshold. */
  threshold: number;
}

export function subscriber(s: SubscriptionRecord): Subscriber {
  return {
    id: s.id,
    kind: s.kind,
    createdAt: s.createdAt,
    types: new Set(s.events),
    filters: s.filters,
    threshold: s.filters.healthFactorBelow ?? DEFAULT_HEALTH_FACTOR_BELOW,
  };
}

/** Whether an event is one a subscription (its types and filters) asks for. */
export function matches(types: ReadonlySet<EventType>, f: EventFilters, a: EventAttributes): boolean {
  if (!types.has(a.type)) return false;
  if (f.chainIds && a.chainId !== null && !f.chainIds.includes(a.chainId)) return false;
  if (
    f.protocols &&
    a.protocols.length > 0 &&
    !a.protocols.some((p) => (f.protocols as readonly string[]).includes(p))
  )
    return false;
  const marketIds = f.marketIds;
  if (marketIds && a.marketKeys.length > 0 && !a.marketKeys.some((m) => marketIds.includes(m))) return false;
  if (f.wallets && a.wallet !== null && !f.wallets.includes(a.wallet)) return false;
  if (
    a.type === 'position.health_factor_below' &&
    a.threshold !== (f.healthFactorBelow ?? DEFAULT_HEALTH_FACTOR_BELOW)
  )
    return false;
  return true;
}

/**
 * Subscribers filed under their most selective filter: each wallet they name, else each market,
 * else each chain, else each protocol, else "everything". An event about one wallet, market,
 * chain and protocol is checked only against the subscribers filed under those (and under
 * "everything"), never against every subscriber.
 */
export class SubscriberBuckets {
  private readonly wallets = new Map<string, Subscriber[]>();
  private readonly markets = new Map<string, Subscriber[]>();
  private readonly chains = new Map<number, Subscriber[]>();
  private readonly protocols = new Map<string, Subscriber[]>();
  private readonly everything: Subscriber[] = [];
  size = 0;

  add(s: Subscriber): void {
    this.size++;
    const f = s.filters;
    const file = <K>(map: Map<K, Subscriber[]>, keys: readonly K[]) => {
      for (const k of new Set(keys)) {
        const list = map.get(k);
        if (list) list.push(s);
        else map.set(k, [s]);
      }
    };
    if (f.wallets && f.wallets.length > 0) file(this.wallets, f.wallets);
    else if (f.marketIds && f.marketIds.length > 0) file(this.markets, f.marketIds);
    else if (f.chainIds && f.chainIds.length > 0) file(this.chains, f.chainIds);
    else if (f.protocols && f.protocols.length > 0) file(this.protocols, f.protocols);
    else this.everything.push(s);
  }

  /** Subscribers matching an event about (at most) one wallet, market, chain and protocol. */
  match(a: EventAttributes, out: Subscriber[] = []): Subscriber[] {
    const check = (list: readonly Subscriber[] | undefined) => {
      if (list) for (const s of list) if (matches(s.types, s.filters, a)) out.push(s);
    };
    if (a.wallet !== null) check(this.wallets.get(a.wallet));
    for (const m of a.marketKeys) check(this.markets.get(m));
    if (a.chainId !== null) check(this.chains.get(a.chainId));
    for (const p of a.protocols) check(this.protocols.get(p));
    check(this.everything);
    return out;
  }

  /**
   * Whether some subscriber is filed where an event about this market, chain and protocol would be
   * looked for, wallets aside: a cheap test before building the event for `match`.
   */
  filedFor(marketKey: string, chainId: number, protocol: string): boolean {
    return (
      this.everything.length > 0 ||
      this.markets.has(marketKey) ||
      this.chains.has(chainId) ||
      this.protocols.has(protocol)
    );
  }

  /** Whether some subscriber is filed under this wallet. */
  filedForWallet(wallet: string): boolean {
    return this.wallets.has(wallet);
  }

  /** Whether some subscriber is filed under a wallet. */
  get hasWallets(): boolean {
    return this.wallets.size > 0;
  }

  /** Every subscriber once (events about many markets or none: oracles). */
  *all(): Iterable<Subscriber> {
    const seen = new Set<string>();
    for (const map of [this.wallets, this.markets, this.chains, this.protocols] as Map<
      unknown,
      Subscriber[]
    >[])
      for (const list of map.values())
        for (const s of list)
          if (!seen.has(s.id)) {
            seen.add(s.id);
            yield s;
          }
    yield* this.everything;
  }
}

/**
 * The subscriptions of one mode, indexed for matching: health-factor subscribers by threshold
 * (a sorted array of the distinct thresholds, then buckets per threshold), the others in buckets.
 */
export class SubscriptionIndex {
  /** Distinct thresholds of health-factor subscribers, ascending. */
  readonly thresholds: number[];
  readonly byThreshold = new Map<number, SubscriberBuckets>();
  /** The buckets of each threshold, in the order of `thresholds`. */
  readonly thresholdBuckets: SubscriberBuckets[];
  readonly liquidations = new SubscriberBuckets();
  readonly oracles: Subscriber[] = [];
  readonly size: number;

  constructor(subs: readonly SubscriptionRecord[]) {
    this.size = subs.length;
    for (const rec of subs) {
      const s = subscriber(rec);
      if (s.types.has('position.health_factor_below')) {
        let b = this.byThreshold.get(s.threshold);
        if (!b) {
          b = new SubscriberBuckets();
          this.byThreshold.set(s.threshold, b);
        }
        b.add(s);
      }
      if (s.types.has('position.liquidated')) this.liquidations.add(s);
      if (s.types.has('oracle.stale') || s.types.has('oracle.recovered')) this.oracles.push(s);
    }
    this.thresholds = [...this.byThreshold.keys()].sort((a, b) => a - b);
    this.thresholdBuckets = this.thresholds.map((t) => this.byThreshold.get(t) ?? new SubscriberBuckets());
  }

  /** The highest threshold (0 when none). */
  get maxThreshold(): number {
    return this.thresholds.at(-1) ?? 0;
  }

  /** Index of the first threshold above `h`. */
  firstAbove(h: number): number {
    const t = this.thresholds;
    let lo = 0;
    let hi = t.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const v = t[mid];
      if (v !== undefined && v > h) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
}
