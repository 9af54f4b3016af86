import { type ErrorBody, LrdsApiError, type LrdsError, LrdsResponseError } from './errors.ts';
import {
  type RetryOptions,
  type RetryPolicy,
  retryDelayMs,
  retryPolicy,
  serverHintMs,
  sleep,
} from './retry.ts';
import type { components, operations } from './schema.ts';

export type Market = components['schemas']['Market'];
export type PositionAtRisk = components['schemas']['PositionAtRisk'];
export type Position = components['schemas']['Position'];
export type Portfolio = components['schemas']['Portfolio'];
export type Token = components['schemas']['Token'];
export type TokenDetail = components['schemas']['TokenDetail'];
export type Oracle = components['schemas']['Oracle'];
export type OracleDetail = components['schemas']['OracleDetail'];
export type OracleRound = components['schemas']['OracleRound'];
export type MarketHistoryPoint = components['schemas']['MarketHistoryPoint'];
export type Liquidation = components['schemas']['Liquidation'];
export type Vault = components['schemas']['Vault'];
export type MarketRating = components['schemas']['MarketRating'];
export type VaultRating = components['schemas']['VaultRating'];
export type RatingChange = components['schemas']['RatingChange'];
export type RatingMethodology = components['schemas']['RatingMethodology'];
export type Meta = components['schemas']['Meta'];
export type Webhook = Success<'getWebhook'>['data'];
export type WebhookDelivery = Success<'listWebhookDeliveries'>['data'][number];
/** A risk event as a webhook receives it and the stream sends it (`data` in the API's own shapes). */
export interface RiskEvent {
  id: string;
  type: 'position.health_factor_below' | 'position.liquidated' | 'oracle.stale' | 'oracle.recovered' | 'ping';
  /** ISO 8601 UTC. */
  createdAt: string;
  data: unknown;
}
/** Options of `streamEvents`. */
export interface StreamEventsOptions extends RequestOptions {
  /** Resume after this event (as `Last-Event-ID`); default: from now. */
  lastEventId?: string;
  /** Pause before reconnecting after the stream broke, ms (default: the server's `retry:`, else 2000). */
  reconnectDelayMs?: number;
  /** Reconnections in a row without an event received before giving up (default 10). */
  maxReconnects?: number;
}

/** The operations of the API, by their OpenAPI `operationId`. */
export type OperationId = keyof operations;
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The body of an operation's success (200, or 201 for a creation, 202 for something under way). */
export type Success<K extends OperationId> = operations[K]['responses'] extends { 200: infer R }
  ? JsonOf<R>
  : operations[K]['responses'] extends { 201: infer R }
    ? JsonOf<R>
    : operations[K]['responses'] extends { 202: infer R }
      ? JsonOf<R>
      : never;
/** The query parameters of an operation. */
export type Query<K extends OperationId> = NonNullable<operations[K]['parameters']['query']>;
/** The operations that answer a list, which `pages` and `paginate` walk through. */
export type ListOperation = keyof ListPages;
/** A page of each list operation. */
interface ListPages {
  listMarkets: Success<'listMarkets'>;
  searchMarkets: Success<'searchMarkets'>;
  positionsAtRisk: Success<'positionsAtRisk'>;
  listTokens: Success<'listTokens'>;
  listOracles: Success<'listOracles'>;
  listVaults: Success<'listVaults'>;
  listMarketRatings: Success<'listMarketRatings'>;
  listVaultRatings: Success<'listVaultRatings'>;
  listPositions: Success<'listPositions'>;
  listLiquidations: Success<'listLiquidations'>;
  analyticsTimeseries: Success<'analyticsTimeseries'>;
  listResearchReports: Success<'listResearchReports'>;
}
/** An item of a list operation's `data`. */
export type Item<K extends ListOperation> = ListPages[K]['data'][number];

/** The slice of `fetch` the client uses (global `fetch` fits). */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface ClientOptions {
  /** The API's base URL, its `/api/v1` prefix included, e.g. `http://localhost:8080/api/v1`. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Without one only `health` and `apiRoot` answer. */
  apiKey?: string;
  /** Retries of answers 429 and 503 (see RetryOptions for the defaults); `false`: none. */
  retry?: RetryOptions | false;
  /** Headers sent with every request (e.g. `X-Request-Id`). */
  headers?: Record<string, string>;
  /** Called before each wait for a retry. */
  onRetry?: (event: { attempt: number; delayMs: number; error: LrdsError }) => void;
  /** Defaults to the global `fetch`. */
  fetch?: FetchLike;
  /** Waits between retries; defaults to a timer. Tests pass one that does not wait. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** The jitter source, in [0, 1); defaults to Math.random. */
  random?: () => number;
  /** Epoch ms, to read a `Retry-After` given as a date; defaults to Date.now. */
  now?: () => number;
}

export interface RequestOptions {
  signal?: AbortSignal;
  /** Headers of this request, over the client's. */
  headers?: Record<string, string>;
}

type QueryValue = string | number | boolean | readonly (string | number)[] | null | undefined;

const LIST_PATHS: Record<ListOperation, string> = {
  listMarkets: '/markets',
  searchMarkets: '/markets/search',
  positionsAtRisk: '/risk/positions-at-risk',
  listTokens: '/tokens',
  listOracles: '/oracles',
  listVaults: '/vaults',
  listMarketRatings: '/ratings/markets',
  listVaultRatings: '/ratings/vaults',
  listPositions: '/positions',
  listLiquidations: '/liquidations',
  analyticsTimeseries: '/analytics/timeseries',
  listResearchReports: '/research/reports',
};

/** The last line of an NDJSON answer (DECISIONS D17). */
interface MetaLine {
  meta: Meta;
}

/**
 * A client of the Lending Risk Data API. One method per operation of the OpenAPI document,
 * named by its operationId; each resolves to the answer's `{ data, meta }` and throws an
 * `LrdsApiError` (typed by code) for an error answer, after retrying 429 and 503.
 */
export class LrdsClient {
  readonly #baseUrl: string;
  readonly #headers: Record<string, string>;
  readonly #retry: RetryPolicy;
  readonly #options: ClientOptions;

  constructor(options: ClientOptions) {
    const base = new URL(options.baseUrl);
    this.#baseUrl = base.href.replace(/\/+$/, '');
    this.#retry = retryPolicy(options.retry);
    this.#options = options;
    this.#headers = { accept: 'application/json', ...options.headers };
    if (options.apiKey !== undefined) this.#headers['authorization'] = `Bearer ${options.apiKey}`;
  }

  /** Where things are: the paths of the docs, the OpenAPI document, health and the main resources (no key needed). */
  apiRoot(options?: RequestOptions): Promise<Success<'apiRoot'>> {
    return this.#request('GET', '/', undefined, undefined, options);
  }

  /** State of the service and of each data source (no key needed). */
  health(options?: RequestOptions): Promise<Success<'health'>> {
    return this.#request('GET', '/health', undefined, undefined, options);
  }

  /** Markets by supply (USD), largest first; page with `limit` and `offset` (or use `paginate`). */
  listMarkets(query: Query<'listMarkets'> = {}, options?: RequestOptions): Promise<Success<'listMarkets'>> {
    return this.#request('GET', LIST_PATHS.listMarkets, query, undefined, options);
  }

  /** Keyword search over symbols, names, labels and `COLLATERAL/LOAN`. */
  searchMarkets(query: Query<'searchMarkets'>, options?: RequestOptions): Promise<Success<'searchMarkets'>> {
    return this.#request('GET', LIST_PATHS.searchMarkets, query, undefined, options);
  }

  /** One market by its uniqueKey (case-insensitive). */
  getMarket(marketId: string, options?: RequestOptions): Promise<Success<'getMarket'>> {
    return this.#request('GET', `/markets/${encodeURIComponent(marketId)}`, undefined, undefined, options);
  }

  /** Borrow positions below a health factor, lowest first. */
  positionsAtRisk(
    query: Query<'positionsAtRisk'> = {},
    options?: RequestOptions,
  ): Promise<Success<'positionsAtRisk'>> {
    return this.#request('GET', LIST_PATHS.positionsAtRisk, query, undefined, options);
  }

  /** A market's risk: liquidatable now and under collateral falls of 5 to 30 %, concentration, liquidity, oracle health. */
  getMarketRisk(marketId: string, options?: RequestOptions): Promise<Success<'getMarketRisk'>> {
    return this.#request(
      'GET',
      `/risk/markets/${encodeURIComponent(marketId)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** A stress test: `shocks` such as `'WETH:-0.2,WBTC:-0.15'`; correlated assets follow their base. */
  stressTest(query: Query<'stressTest'>, options?: RequestOptions): Promise<Success<'stressTest'>> {
    return this.#request('GET', '/risk/stress', query, undefined, options);
  }

  /** A wallet's borrow positions for agents: risk level, flags with reasons, what brings each back to a target. */
  agentWalletRisk(
    address: string,
    query: Query<'agentWalletRisk'> = {},
    options?: RequestOptions,
  ): Promise<Success<'agentWalletRisk'>> {
    return this.#request(
      'GET',
      `/agent/wallet-risk/${encodeURIComponent(address)}`,
      query,
      undefined,
      options,
    );
  }

  /** A market for agents: a sentence, key figures, flags with reasons, 10 and 20 % stress. */
  agentMarketBrief(marketId: string, options?: RequestOptions): Promise<Success<'agentMarketBrief'>> {
    return this.#request(
      'GET',
      `/agent/market-brief/${encodeURIComponent(marketId)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** The daily risk digests, newest first; page with `cursor`. */
  listResearchReports(
    query: Query<'listResearchReports'> = {},
    options?: RequestOptions,
  ): Promise<Success<'listResearchReports'>> {
    return this.#request('GET', LIST_PATHS.listResearchReports, query, undefined, options);
  }

  /** One daily digest (`<YYYY-MM-DD>-<protocol>`), as JSON with its Markdown. */
  getResearchReport(
    id: string,
    query: Query<'getResearchReport'> = {},
    options?: RequestOptions,
  ): Promise<Success<'getResearchReport'>> {
    return this.#request('GET', `/research/reports/${encodeURIComponent(id)}`, query, undefined, options);
  }

  /** Supply, borrow, utilization, positions at risk: in total, by protocol and by chain. */
  analyticsOverview(
    query: Query<'analyticsOverview'> = {},
    options?: RequestOptions,
  ): Promise<Success<'analyticsOverview'>> {
    return this.#request('GET', '/analytics/overview', query, undefined, options);
  }

  /** Daily totals by protocol (or chain) from the stored history; page with `cursor`. */
  analyticsTimeseries(
    query: Query<'analyticsTimeseries'> = {},
    options?: RequestOptions,
  ): Promise<Success<'analyticsTimeseries'>> {
    return this.#request('GET', LIST_PATHS.analyticsTimeseries, query, undefined, options);
  }

  /** A market's daily (or hourly, `interval: 'hour'`) points, oldest first; page with `cursor`. */
  getMarketHistory(
    marketId: string,
    query: Query<'getMarketHistory'> = {},
    options?: RequestOptions,
  ): Promise<Success<'getMarketHistory'>> {
    return this.#request(
      'GET',
      `/markets/${encodeURIComponent(marketId)}/history`,
      query,
      undefined,
      options,
    );
  }

  /** Tokens by chain and address, with USD price and its source; page with `cursor` (or use `paginate`). */
  listTokens(query: Query<'listTokens'> = {}, options?: RequestOptions): Promise<Success<'listTokens'>> {
    return this.#request('GET', LIST_PATHS.listTokens, query, undefined, options);
  }

  /** One token: its feeds and every market holding it. */
  getToken(chainId: number, address: string, options?: RequestOptions): Promise<Success<'getToken'>> {
    return this.#request(
      'GET',
      `/tokens/${chainId}/${encodeURIComponent(address)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** Oracles with their feeds' freshness; `stale: true` for the stale ones. */
  listOracles(query: Query<'listOracles'> = {}, options?: RequestOptions): Promise<Success<'listOracles'>> {
    return this.#request('GET', LIST_PATHS.listOracles, query, undefined, options);
  }

  /** One oracle and the markets that depend on it. */
  getOracle(chainId: number, address: string, options?: RequestOptions): Promise<Success<'getOracle'>> {
    return this.#request(
      'GET',
      `/oracles/${chainId}/${encodeURIComponent(address)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** The rounds an oracle's feeds published, oldest first; page with `cursor`. */
  getOracleRounds(
    chainId: number,
    address: string,
    query: Query<'getOracleRounds'> = {},
    options?: RequestOptions,
  ): Promise<Success<'getOracleRounds'>> {
    return this.#request(
      'GET',
      `/oracles/${chainId}/${encodeURIComponent(address)}/rounds`,
      query,
      undefined,
      options,
    );
  }

  /** Morpho and Euler vaults with their allocations; page with `cursor` (or use `paginate`). */
  listVaults(query: Query<'listVaults'> = {}, options?: RequestOptions): Promise<Success<'listVaults'>> {
    return this.#request('GET', LIST_PATHS.listVaults, query, undefined, options);
  }

  /** One vault. */
  getVault(chainId: number, address: string, options?: RequestOptions): Promise<Success<'getVault'>> {
    return this.#request(
      'GET',
      `/vaults/${chainId}/${encodeURIComponent(address)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** Markets' credit ratings by score (best first); page with `cursor` (or use `paginate`). */
  listMarketRatings(
    query: Query<'listMarketRatings'> = {},
    options?: RequestOptions,
  ): Promise<Success<'listMarketRatings'>> {
    return this.#request('GET', LIST_PATHS.listMarketRatings, query, undefined, options);
  }

  /** One market's credit rating: grade, score and components with their explanations. */
  getMarketRating(marketId: string, options?: RequestOptions): Promise<Success<'getMarketRating'>> {
    return this.#request(
      'GET',
      `/ratings/markets/${encodeURIComponent(marketId)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** The changes of a market's rating, oldest first; page with `cursor`. */
  getMarketRatingHistory(
    marketId: string,
    query: Query<'getMarketRatingHistory'> = {},
    options?: RequestOptions,
  ): Promise<Success<'getMarketRatingHistory'>> {
    return this.#request(
      'GET',
      `/ratings/markets/${encodeURIComponent(marketId)}/history`,
      query,
      undefined,
      options,
    );
  }

  /** Vaults' credit ratings by score (best first); page with `cursor` (or use `paginate`). */
  listVaultRatings(
    query: Query<'listVaultRatings'> = {},
    options?: RequestOptions,
  ): Promise<Success<'listVaultRatings'>> {
    return this.#request('GET', LIST_PATHS.listVaultRatings, query, undefined, options);
  }

  /** One vault's credit rating, with each allocation's grade. */
  getVaultRating(
    chainId: number,
    address: string,
    options?: RequestOptions,
  ): Promise<Success<'getVaultRating'>> {
    return this.#request(
      'GET',
      `/ratings/vaults/${chainId}/${encodeURIComponent(address)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** The changes of a vault's rating, oldest first; page with `cursor`. */
  getVaultRatingHistory(
    chainId: number,
    address: string,
    query: Query<'getVaultRatingHistory'> = {},
    options?: RequestOptions,
  ): Promise<Success<'getVaultRatingHistory'>> {
    return this.#request(
      'GET',
      `/ratings/vaults/${chainId}/${encodeURIComponent(address)}/history`,
      query,
      undefined,
      options,
    );
  }

  /** The versioned rating methodology: grades, components, weights, formulas and parameters. */
  getRatingMethodology(options?: RequestOptions): Promise<Success<'getRatingMethodology'>> {
    return this.#request('GET', '/ratings/methodology', undefined, undefined, options);
  }

  /** A wallet's positions with their liquidation prices. */
  listPositions(query: Query<'listPositions'>, options?: RequestOptions): Promise<Success<'listPositions'>> {
    return this.#request('GET', LIST_PATHS.listPositions, query, undefined, options);
  }

  /** Liquidations, newest first, as one JSON answer (see `streamLiquidations` for large ones). */
  listLiquidations(
    query: Query<'listLiquidations'> = {},
    options?: RequestOptions,
  ): Promise<Success<'listLiquidations'>> {
    return this.#request('GET', LIST_PATHS.listLiquidations, query, undefined, options);
  }

  /**
   * Liquidations as they arrive, one at a time, read as NDJSON (`Accept: application/x-ndjson`):
   * the answer is never held whole in memory, however large `limit` is (up to 500,000). `onMeta`
   * receives the meta of the last line (with `nextCursor` when more match). A body that ends
   * without its meta line was cut short: the iterator throws.
   */
  async *streamLiquidations(
    query: Query<'listLiquidations'> = {},
    options?: RequestOptions & { onMeta?: (meta: Meta) => void },
  ): AsyncGenerator<Liquidation, void, undefined> {
    const res = await this.#fetch('GET', LIST_PATHS.listLiquidations, query, undefined, {
      ...options,
      headers: { accept: 'application/x-ndjson', ...options?.headers },
    });
    if (!res.body) throw new Error('the answer has no body');
    const decoder = new TextDecoder();
    let rest = '';
    let meta: Meta | null = null;
    const lines = function* (text: string) {
      for (const line of text.split('\n'))
        if (line.trim() !== '') yield JSON.parse(line) as Liquidation | MetaLine;
    };
    const reader = res.body.getReader();
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      rest += decoder.decode(chunk, { stream: true });
      const end = rest.lastIndexOf('\n');
      if (end < 0) continue;
      const complete = rest.slice(0, end);
      rest = rest.slice(end + 1);
      for (const value of lines(complete)) {
        if ('meta' in value) meta = value.meta;
        else yield value;
      }
    }
    for (const value of lines(rest + decoder.decode())) {
      if ('meta' in value) meta = value.meta;
      else yield value;
    }
    if (meta === null) throw new Error('the liquidations stream ended without its meta line (cut short)');
    options?.onMeta?.(meta);
  }

  /** A wallet across protocols and chains. */
  getPortfolio(
    address: string,
    query: Query<'getPortfolio'> = {},
    options?: RequestOptions,
  ): Promise<Success<'getPortfolio'>> {
    return this.#request('GET', `/portfolios/${encodeURIComponent(address)}`, query, undefined, options);
  }

  /** Your account, the calling key and its tier. */
  getProfile(options?: RequestOptions): Promise<Success<'getProfile'>> {
    return this.#request('GET', '/client/profile', undefined, undefined, options);
  }

  /** Your account's keys (never the whole key). */
  listApiKeys(options?: RequestOptions): Promise<Success<'listApiKeys'>> {
    return this.#request('GET', '/client/api-keys', undefined, undefined, options);
  }

  /** Creates a key; the answer shows the whole key, once. */
  createApiKey(
    body: operations['createApiKey']['requestBody']['content']['application/json'] = {},
    options?: RequestOptions,
  ): Promise<Success<'createApiKey'>> {
    return this.#request('POST', '/client/api-keys', undefined, body, options);
  }

  /** Revokes a key of your account. */
  revokeApiKey(keyId: string, options?: RequestOptions): Promise<Success<'revokeApiKey'>> {
    return this.#request(
      'DELETE',
      `/client/api-keys/${encodeURIComponent(keyId)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** Counted requests per UTC day and endpoint. */
  getUsage(query: Query<'getUsage'> = {}, options?: RequestOptions): Promise<Success<'getUsage'>> {
    return this.#request('GET', '/client/usage', query, undefined, options);
  }

  /** Tier, rate, quotas, what is used and left, and when they reset. */
  getQuota(options?: RequestOptions): Promise<Success<'getQuota'>> {
    return this.#request('GET', '/client/quota', undefined, undefined, options);
  }

  /** Your webhooks (of the calling key's mode); secrets are never shown again. */
  listWebhooks(options?: RequestOptions): Promise<Success<'listWebhooks'>> {
    return this.#request('GET', '/client/webhooks', undefined, undefined, options);
  }

  /** Creates a webhook; the answer shows its signing secret, once. */
  createWebhook(
    body: operations['createWebhook']['requestBody']['content']['application/json'],
    options?: RequestOptions,
  ): Promise<Success<'createWebhook'>> {
    return this.#request('POST', '/client/webhooks', undefined, body, options);
  }

  /** One webhook of your account. */
  getWebhook(webhookId: string, options?: RequestOptions): Promise<Success<'getWebhook'>> {
    return this.#request(
      'GET',
      `/client/webhooks/${encodeURIComponent(webhookId)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** Deletes a webhook (its pending deliveries are marked failed). */
  deleteWebhook(webhookId: string, options?: RequestOptions): Promise<Success<'deleteWebhook'>> {
    return this.#request(
      'DELETE',
      `/client/webhooks/${encodeURIComponent(webhookId)}`,
      undefined,
      undefined,
      options,
    );
  }

  /** Sends a `ping` event to the webhook (follow it in its deliveries). */
  testWebhook(webhookId: string, options?: RequestOptions): Promise<Success<'testWebhook'>> {
    return this.#request(
      'POST',
      `/client/webhooks/${encodeURIComponent(webhookId)}/test`,
      undefined,
      {},
      options,
    );
  }

  /** A webhook's delivery log, newest first. */
  listWebhookDeliveries(
    webhookId: string,
    query: Query<'listWebhookDeliveries'> = {},
    options?: RequestOptions,
  ): Promise<Success<'listWebhookDeliveries'>> {
    return this.#request(
      'GET',
      `/client/webhooks/${encodeURIComponent(webhookId)}/deliveries`,
      query,
      undefined,
      options,
    );
  }

  /**
   * The risk events stream (`GET /events/stream`, server-sent events) as an async iterator of
   * events. When the connection breaks, it reconnects with `Last-Event-ID` set to the last
   * event received, so nothing retained is missed (an event may come twice: dedupe by id). It
   * ends when `signal` aborts (or the loop is left); an error answer (401, 403, 429…) throws.
   */
  async *streamEvents(
    query: Query<'streamEvents'> = {},
    options: StreamEventsOptions = {},
  ): AsyncGenerator<RiskEvent, void, undefined> {
    let lastEventId = options.lastEventId;
    let retryMs = options.reconnectDelayMs ?? 2000;
    let quietReconnects = 0;
    const wait = this.#options.sleep ?? sleep;
    for (;;) {
      if (options.signal?.aborted) return;
      let res: Response;
      try {
        res = await this.#fetch('GET', '/events/stream', query, undefined, {
          ...options,
          headers: {
            accept: 'text/event-stream',
            ...(lastEventId ? { 'last-event-id': lastEventId } : {}),
            ...options.headers,
          },
        });
      } catch (err) {
        // An answer of the API (a refusal) ends the stream; a network failure is retried.
        if (err instanceof LrdsApiError || options.signal?.aborted) throw err;
        if (++quietReconnects > (options.maxReconnects ?? 10)) throw err;
        await wait(retryMs, options.signal);
        continue;
      }
      let gotEvent = false;
      try {
        if (!res.body) throw new Error('the stream has no body');
        const reader = res.body.getReader();
        const decoder = new TextDecoder();
        let buffer = '';
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buffer += decoder.decode(value, { stream: true }).replace(/\r\n?/g, '\n');
          for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
            const block = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let id: string | null = null;
            let data = '';
            for (const line of block.split('\n')) {
              if (line.startsWith(':')) continue;
              const colon = line.indexOf(':');
              const field = colon < 0 ? line : line.slice(0, colon);
              const v = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
              if (field === 'id') id = v;
              else if (field === 'data') data += data === '' ? v : `\n${v}`;
              else if (field === 'retry' && /^\d+$/.test(v) && options.reconnectDelayMs === undefined)
                retryMs = Number(v);
            }
            if (data === '') continue;
            if (id !== null) lastEventId = id;
            gotEvent = true;
            quietReconnects = 0;
            yield JSON.parse(data) as RiskEvent;
          }
        }
      } catch {
        // The connection broke mid-stream: reconnect below, from the last event received.
        if (options.signal?.aborted) return;
      }
      if (options.signal?.aborted) return;
      if (!gotEvent && ++quietReconnects > (options.maxReconnects ?? 10))
        throw new Error('the event stream kept breaking without delivering an event');
      await wait(retryMs, options.signal);
    }
  }

  /**
   * Sends one JSON-RPC message (or a batch) to the MCP server of the agent API and resolves to
   * its JSON-RPC answer, or null for notifications (answered 202). Each `tools/call` counts as
   * one request. For an MCP session, point an MCP client at `<baseUrl>/agent/mcp` instead.
   */
  async mcp(
    message: operations['mcp']['requestBody']['content']['application/json'],
    options?: RequestOptions,
  ): Promise<Success<'mcp'> | null> {
    const headers = { accept: 'application/json, text/event-stream', ...options?.headers };
    const res = await this.#fetch('POST', '/agent/mcp', undefined, message, { ...options, headers });
    return res.status === 202 ? null : ((await res.json()) as Success<'mcp'>);
  }

  /**
   * The pages of a list, first to last; `limit` is the page size. Follows `meta.nextCursor`
   * (DECISIONS D17: absent on the last page) whenever the server sends one; `listMarkets`
   * without a cursor pages by `offset` up to `meta.total` (an offset page may skip or repeat a
   * market whose supply moved between two requests; a cursor keeps the order stable).
   */
  async *pages<K extends ListOperation>(
    operation: K,
    query: Query<K>,
    options?: RequestOptions,
  ): AsyncGenerator<ListPages[K], void, undefined> {
    const first: Record<string, QueryValue> = { ...query };
    let next: Record<string, QueryValue> = first;
    const cursors = new Set<string>();
    for (;;) {
      const page: ListPages[K] = await this.#request('GET', LIST_PATHS[operation], next, undefined, options);
      yield page;
      const { count, nextCursor, total } = pageFacts(page);
      if (nextCursor !== null) {
        if (cursors.has(nextCursor)) throw new Error(`the server sent cursor ${nextCursor} twice`);
        cursors.add(nextCursor);
        const { offset: _offset, ...rest } = first;
        next = { ...rest, cursor: nextCursor };
        continue;
      }
      // D17: a cursor absent on a page reached by cursor marks the last page.
      if (cursors.size > 0 || operation !== 'listMarkets' || total === null || count === 0) return;
      const offset = Number(next['offset'] ?? 0) + count;
      if (offset >= total) return;
      next = { ...next, offset };
    }
  }

  /** The items of every page of a list, in order (see `pages`). */
  async *paginate<K extends ListOperation>(
    operation: K,
    query: Query<K>,
    options?: RequestOptions,
  ): AsyncGenerator<Item<K>, void, undefined> {
    for await (const page of this.pages(operation, query, options)) yield* page.data;
  }

  async #request<T>(
    method: string,
    path: string,
    query: object | undefined,
    body: unknown,
    options: RequestOptions | undefined,
  ): Promise<T> {
    const res = await this.#fetch(method, path, query, body, options);
    return (await res.json()) as T;
  }

  /** The successful answer of a request, after retrying 429 and 503; an LrdsError otherwise. */
  async #fetch(
    method: string,
    path: string,
    query: object | undefined,
    body: unknown,
    options: RequestOptions | undefined,
  ): Promise<Response> {
    const o = this.#options;
    const url = this.#baseUrl + path + queryString(query);
    const headers = { ...this.#headers, ...options?.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const init: RequestInit = {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: options?.signal,
    };
    const doFetch = o.fetch ?? ((u: string, i: RequestInit) => fetch(u, i));
    for (let attempt = 1; ; attempt++) {
      const res = await doFetch(url, init);
      if (res.ok) return res;
      const { error, hintMs } = await failure(res, attempt, (o.now ?? Date.now)());
      if ((res.status !== 429 && res.status !== 503) || attempt >= this.#retry.maxAttempts) throw error;
      const delayMs = retryDelayMs(attempt - 1, hintMs, this.#retry, o.random ?? Math.random);
      if (delayMs === null) throw error;
      o.onRetry?.({ attempt, delayMs, error });
      await (o.sleep ?? sleep)(delayMs, options?.signal);
    }
  }
}

/** `?a=1&b=x,y` from the defined parameters (arrays comma-joined), or ''. */
function queryString(query: object | undefined): string {
  if (query === undefined) return '';
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query) as [string, QueryValue][]) {
    if (value === undefined || value === null) continue;
    params.set(name, Array.isArray(value) ? value.join(',') : String(value));
  }
  const text = params.toString();
  return text === '' ? '' : `?${text}`;
}

/** What paging needs from a list answer, read defensively. */
function pageFacts(page: unknown): { count: number; nextCursor: string | null; total: number | null } {
  const { data, meta } = (page ?? {}) as { data?: unknown; meta?: { nextCursor?: unknown; total?: unknown } };
  return {
    count: Array.isArray(data) ? data.length : 0,
    nextCursor: typeof meta?.nextCursor === 'string' && meta.nextCursor !== '' ? meta.nextCursor : null,
    total: typeof meta?.total === 'number' ? meta.total : null,
  };
}

async function failure(
  res: Response,
  attempts: number,
  nowMs: number,
): Promise<{ error: LrdsError; hintMs: number | null }> {
  const requestId = res.headers.get('x-request-id');
  const text = await res.text().catch(() => '');
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: an answer of something in front of the API
  }
  const retryAfter = (body as { retryAfter?: unknown } | null)?.retryAfter;
  const hintMs = serverHintMs(retryAfter, res.headers.get('retry-after'), nowMs);
  if (isErrorBody(body)) {
    return { error: new LrdsApiError(body, res.status, attempts, requestId, hintMs), hintMs };
  }
  return { error: new LrdsResponseError(res.status, text, attempts, requestId), hintMs };
}

function isErrorBody(body: unknown): body is ErrorBody {
  if (typeof body !== 'object' || body === null) return false;
  const { error, message } = body as { error?: unknown; message?: unknown };
  return typeof error === 'string' && typeof message === 'string';
}
