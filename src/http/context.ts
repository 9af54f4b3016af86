import type { FastifyRequest } from 'fastify';
import type { Admission } from '../access/admission.ts';
import type { Idempotency } from '../access/idempotency.ts';
import type { KeyService } from '../access/keys.ts';
import type { Category, Tier, TierTable } from '../access/tiers.ts';
import type { PageSnapshots } from '../data/page-snapshots.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { Clock } from '../domain/clock.ts';
import type { PassState } from '../domain/pass-state.ts';
import type { KeyMode, KeyRecord } from '../domain/records/keys.ts';
import type { EventsApi } from '../events/api.ts';
import type { RatingsReader } from '../queries/ratings.ts';
import type { HistoryReader } from '../queries/types.ts';
import type { HttpStore } from '../store/types.ts';
import type { AnswerCache } from './answer-cache.ts';
import type { ErrorCode } from './errors.ts';

/** What a route declares; the access pipeline does the rest (DESIGN.md). */
export interface RouteAccess {
  /** Endpoint category (docs/decisions.md "Tiers and categories"); null for `/client/*`, open to every valid key. */
  category: Category | null;
  /** Route maximum of `limit`, when the route takes one. */
  limitMax?: number;
  /** False: rate limited but not counted toward quotas. Default true. */
  counted?: boolean;
  /**
   * True: the access hook only authenticates; the route admits the request itself, from its
   * body (`POST /agent/mcp`: each tool call is one request of the API), with `admitRequest`.
   */
  admittedByRoute?: boolean;
  /**
   * The path parameter naming the one chain the route serves, for the chain access check
   * (CHAIN_FORBIDDEN): `marketId` (a market uniqueKey carries its chain) or `chainId`.
   */
  chainParam?: 'marketId' | 'chainId';
}

export interface Caller {
  key: KeyRecord;
  tier: Tier;
}

export interface HealthReport {
  status: 'ok' | 'degraded';
  store: {
    backend: string;
    /** degraded: it answers reads but refuses writes (a full disk). */
    state: 'up' | 'degraded' | 'down';
    /** While writes fail: since when (ISO 8601) and the store's error. */
    writesFailingSince?: string;
    writeError?: string;
  };
  limiter: { backend: string; state: 'up' | 'down' };
  datasets: {
    mode: KeyMode;
    kind: string;
    profile: string;
    refreshedAt: string;
    markets: number;
    positions: number;
  }[];
  /** The ingestion pass running in this process; null when none is. */
  ingestion: PassState | null;
  sources: {
    id: string;
    kind: string;
    chains: number[];
    lastRefresh: string | null;
    ageSeconds: number | null;
    lastBlock: Record<string, number>;
    lagBlocks: Record<string, number>;
    /** Per chain id, its sync under way (absent when every chain of the source is synced). */
    sync?: Record<string, SyncProgress>;
    consecutiveFailures: number;
    lastError: string | null;
    inUse: boolean;
  }[];
}

/** Read models by key mode: test keys get the fixed sandbox, live keys the live store (docs/decisions.md "Keys and accounts"). */
export interface DataSource {
  get(mode: KeyMode): ReadModel;
  /** The model of a mode if it is built, never building one (the test keys' sandbox is built on first use). */
  peek?(mode: KeyMode): ReadModel | null;
}

/** Everything the app needs, wired in one composition root (src/cli/serve.ts, tests). */
export interface AppDeps {
  /** Read-only: keys are created and revoked through `keys`, usage is counted through `admission`. */
  store: HttpStore;
  tiers: TierTable;
  keys: KeyService;
  admission: Admission;
  /** Idempotency-Key of self-service writes (`POST /client/api-keys`). */
  idempotency: Idempotency;
  data: DataSource;
  /** The history the history routes read (market snapshots, oracle rounds, liquidations). */
  history: HistoryReader;
  /** The latest ratings of each model (computed by the ratings job) and the recorded rating changes. */
  ratings: RatingsReader;
  /** Webhooks of the client area and the event streams (risk events). */
  events: EventsApi;
  clock: Clock;
  /** Pino options, or false for no logging. */
  logger?: boolean | Record<string, unknown>;
  /** The ingestion pass running in this process, if any (shown by /health). */
  ingestion?: (nowMs: number) => PassState | null;
  /**
   * The sources file's sources (none without one): /health lists each from start-up, and says
   * `degraded` while one has never been read.
   */
  configuredSources?: readonly { id: string; kind: string; chainIds: readonly number[] }[];
  /** Called for `GET /health`; defaults to probing the store. */
  health?: () => Promise<HealthReport>;
  /** Socket timeouts and overload protection; defaults in src/http/server-options.ts (SERVER_DEFAULTS). */
  server?: ServerOptions;
  /** Whole answers of the polled routes; one of ANSWER_CACHE_BYTES per app when not given. */
  answers?: AnswerCache;
  /**
   * Where paged lists keep the set their first page fixed (positions at risk): shared by every
   * instance (Redis) when they share the traffic; this process's memory when not given.
   */
  pageSnapshots?: PageSnapshots;
  /**
   * The service's background jobs (src/jobs/runner.ts): an event-loop delay they caused is the
   * service's own, and the overload guard does not shed requests for it.
   */
  backgroundWork?: { heldLoopWithin(ms: number): boolean };
}

/** What routes are registered with: the app's dependencies, the answer cache and snapshot store made. */
export type RouteDeps = AppDeps & { answers: AnswerCache; pageSnapshots: PageSnapshots };

/** Protection against slow, greedy and overwhelming clients. All optional; times in ms. */
export interface ServerOptions {
  /** A socket with no activity for this long is closed. */
  connectionTimeoutMs?: number;
  /** The whole request (headers and body) must arrive within this. */
  requestTimeoutMs?: number;
  /** The request headers must arrive within this (at most requestTimeoutMs). */
  headersTimeoutMs?: number;
  /** An idle keep-alive socket is closed after this. */
  keepAliveTimeoutMs?: number;
  /** How often Node checks sockets against the request and headers timeouts. */
  connectionsCheckingIntervalMs?: number;
  /** Requests served on one socket before it is closed; 0 = unlimited. */
  maxRequestsPerSocket?: number;
  /**
   * The proxies whose X-Forwarded-For names the client's address (Fastify's trustProxy): true,
   * a number of hops, or addresses and CIDR ranges (comma-separated). Default: none.
   */
  trustProxy?: boolean | number | string;
  /** The budget of anonymous requests per client address (src/access/anonymous-limit.ts); false turns it off. */
  anonymous?:
    | false
    | {
        /** Requests an address gets back per second. */
        ratePerSecond?: number;
        /** Requests an address may send at once after a pause. */
        burst?: number;
        /** Addresses tracked at once (the least recently seen are forgotten). */
        maxAddresses?: number;
      };
  /** Overload shedding (503 SERVICE_UNAVAILABLE) by @fastify/under-pressure; false turns it off. */
  pressure?:
    | false
    | {
        /** Event-loop delay above which every request is refused. */
        maxEventLoopDelayMs?: number;
        /**
         * Event-loop delay above which anonymous requests are refused (at most
         * maxEventLoopDelayMs): they are shed first, and requests with a key keep being served.
         */
        anonymousMaxEventLoopDelayMs?: number;
        /** 0 = not checked. */
        maxHeapUsedBytes?: number;
        /** 0 = not checked. */
        maxRssBytes?: number;
        /** How often the measures are sampled. */
        sampleIntervalMs?: number;
        /** Retry-After sent with the 503, in whole seconds (>= 1). */
        retryAfterSeconds?: number;
      };
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
  interface FastifyContextConfig {
    access?: RouteAccess;
    /**
     * The errors the route answers besides those of its scope and of its access declaration,
     * documented in its OpenAPI responses (routes/index.ts).
     */
    errors?: readonly ErrorCode[];
  }
}

export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route reached without an authenticated caller');
  return request.caller;
}

/** A chain's sync under way as /health shows it (times ISO 8601 UTC, seconds). */
export interface SyncProgress {
  fromBlock: number;
  throughBlock: number;
  toBlock: number;
  blocksDone: number;
  blocksTotal: number;
  accounts: number;
  startedAt: string;
  /** Seconds left at the pace so far; null before any block is done. */
  estimateSeconds: number | null;
}
