import cluster from 'node:cluster';
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, Counter, collectDefaultMetrics, Gauge, Histogram, register } from 'prom-client';

/**
 * Prometheus metrics (prom-client), on its default registry: one set per process, which every
 * app of the process records into, and which `lrds serve --workers` aggregates in the primary
 * (AggregatorRegistry asks each worker over the cluster channel). Served on METRICS_PORT, off
 * the public API. Names and labels:
 * - lrds_http_requests_total{route, method, status, tier}: answers, by route pattern (never the
 *   raw URL: no unbounded labels), status and the caller's tier ('none' before authentication);
 * - lrds_http_request_duration_seconds{route}: server time per answer;
 * - lrds_admission_refusals_total{reason, tier}: RATE_LIMITED, DAILY_QUOTA, MONTHLY_QUOTA;
 * - lrds_key_lookups_total{result}: key checks answered by the cache ('hit') or the store ('miss');
 * - lrds_read_model_markets / lrds_read_model_positions{mode}: sizes of the served data;
 * - lrds_source_age_seconds{source}: time since each source's last successful refresh;
 * - lrds_store_round_trip_seconds{backend, op} and lrds_store_errors_total{backend, op}: every call
 *   of the store's ports (op: the method, e.g. findKeyByHash), its time and whether it failed;
 * - lrds_redis_round_trip_seconds{op} and lrds_redis_errors_total{op}: the same for Redis
 *   commands and scripts (op: admit, settle, status, merge, push, lease, time, info, ping, zrem,
 *   publish);
 * - Node's defaults: event-loop delay (nodejs_eventloop_lag_*), heap, GC, CPU.
 */
export interface Metrics {
  requests: Counter<'route' | 'method' | 'status' | 'tier'>;
  latency: Histogram<'route'>;
  refusals: Counter<'reason' | 'tier'>;
  keyLookups: Counter<'result'>;
  storeRoundTrips: Histogram<'backend' | 'op'>;
  storeErrors: Counter<'backend' | 'op'>;
  redisRoundTrips: Histogram<'op'>;
  redisErrors: Counter<'op'>;
}

/** Round trips to a backend: from 50 µs (an embedded read) to 5 s (past every deadline). */
const ROUND_TRIP_BUCKETS = [
  0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5,
];

/** What the scrape-time gauges read: the service of this process (the last one built). */
export interface MetricsSource {
  sizes(): { mode: string; markets: number; positions: number }[];
  sourceAges(): Promise<{ id: string; ageSeconds: number | null }[]>;
}

let metrics: Metrics | null = null;
let source: MetricsSource | null = null;

/** This process's metrics, created on first use. */
export function processMetrics(): Metrics {
  if (metrics) return metrics;
  collectDefaultMetrics();
  // A worker answers the primary's requests for its metrics: prom-client listens for them once
  // an AggregatorRegistry exists in the process.
  if (cluster.isWorker) new AggregatorRegistry();
  new Gauge({
    name: 'lrds_read_model_markets',
    // Every worker holds the same data: across workers the largest, not the sum.
    aggregator: 'max',
    help: 'Markets in the served read model.',
    labelNames: ['mode'],
    collect() {
      this.reset();
      for (const s of source?.sizes() ?? []) this.set({ mode: s.mode }, s.markets);
    },
  });
  new Gauge({
    name: 'lrds_read_model_positions',
    // Every worker holds the same data: across workers the largest, not the sum.
    aggregator: 'max',
    help: 'Positions in the served read model.',
    labelNames: ['mode'],
    collect() {
      this.reset();
      for (const s of source?.sizes() ?? []) this.set({ mode: s.mode }, s.positions);
    },
  });
  new Gauge({
    name: 'lrds_source_age_seconds',
    // Every worker holds the same data: across workers the largest, not the sum.
    aggregator: 'max',
    help: 'Seconds since the last successful refresh of each data source.',
    labelNames: ['source'],
    async collect() {
      this.reset();
      const ages = source ? await source.sourceAges().catch(() => []) : [];
      for (const a of ages) if (a.ageSeconds !== null) this.set({ source: a.id }, a.ageSeconds);
    },
  });
  metrics = {
    requests: new Counter({
      name: 'lrds_http_requests_total',
      help: 'Answers, by route pattern, method, status and tier.',
      labelNames: ['route', 'method', 'status', 'tier'],
    }),
    latency: new Histogram({
      name: 'lrds_http_request_duration_seconds',
      help: 'Server time per answer, by route pattern.',
      labelNames: ['route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    }),
    refusals: new Counter({
      name: 'lrds_admission_refusals_total',
      help: 'Requests refused by the rate limit or a quota.',
      labelNames: ['reason', 'tier'],
    }),
    keyLookups: new Counter({
      name: 'lrds_key_lookups_total',
      help: 'Key checks answered from the cache (hit) or the store (miss).',
      labelNames: ['result'],
    }),
    storeRoundTrips: new Histogram({
      name: 'lrds_store_round_trip_seconds',
      help: "Time of each call of the store's ports, failed ones included, by backend and operation.",
      labelNames: ['backend', 'op'],
      buckets: ROUND_TRIP_BUCKETS,
    }),
    storeErrors: new Counter({
      name: 'lrds_store_errors_total',
      help: 'Calls of the store that failed (unreachable, past their deadline, refused), by backend and operation.',
      labelNames: ['backend', 'op'],
    }),
    redisRoundTrips: new Histogram({
      name: 'lrds_redis_round_trip_seconds',
      help: 'Time of each Redis command or script, failed ones included, by operation.',
      labelNames: ['op'],
      buckets: ROUND_TRIP_BUCKETS,
    }),
    redisErrors: new Counter({
      name: 'lrds_redis_errors_total',
      help: 'Redis commands or scripts that failed (unreachable, timed out, refused), by operation.',
      labelNames: ['op'],
    }),
  };
  return metrics;
}

/** The series of one operation of one backend, its labels resolved once (see timed()). */
export interface CallSeries {
  seconds: { observe(value: number): void };
  errors: { inc(): void };
}

const callSeries = new Map<string, CallSeries>();

/** The series of store operation `op` (a port method) on `backend`. */
export function storeCall(backend: 'sqlite' | 'postgres', op: string): CallSeries {
  const id = `${backend}:${op}`;
  let s = callSeries.get(id);
  if (!s) {
    const m = processMetrics();
    s = { seconds: m.storeRoundTrips.labels(backend, op), errors: m.storeErrors.labels(backend, op) };
    callSeries.set(id, s);
  }
  return s;
}

/** The series of Redis operation `op`. */
export function redisCall(op: string): CallSeries {
  const id = `redis:${op}`;
  let s = callSeries.get(id);
  if (!s) {
    const m = processMetrics();
    s = { seconds: m.redisRoundTrips.labels(op), errors: m.redisErrors.labels(op) };
    callSeries.set(id, s);
  }
  return s;
}

/**
 * Settles as `call` does, recording in `series` its time since `startMs` (performance.now()
 * taken before the call was made: pass it as the argument before the call) and, if it
 * rejects, one error: no closure per call, the series looked up once by the caller.
 */
export async function timed<T>(series: CallSeries, startMs: number, call: PromiseLike<T>): Promise<T> {
  try {
    return await call;
  } catch (err) {
    series.errors.inc();
    throw err;
  } finally {
    series.seconds.observe((performance.now() - startMs) / 1000);
  }
}

/** Names the service whose data the gauges report. */
export function setMetricsSource(s: MetricsSource): void {
  processMetrics();
  source = s;
}

/** Where the metrics server listens and who may read it. */
export interface MetricsServerOptions {
  /** Address to bind (default 127.0.0.1: this machine only). */
  host?: string;
  /** When set, GET /metrics needs `Authorization: Bearer <token>` (401 otherwise). */
  token?: string | null;
  /** The aggregate of every worker (to run in the primary of `lrds serve --workers`). */
  cluster?: boolean;
}

/** Whether `header` is `Bearer <token>`, compared in constant time. */
function bearerMatches(header: string | undefined, token: string): boolean {
  const sent = /^Bearer (.+)$/i.exec(header ?? '')?.[1] ?? '';
  const digest = (t: string) => createHash('sha256').update(t).digest();
  return timingSafeEqual(digest(sent), digest(token));
}

/**
 * Serves GET /metrics on `port` (0: any free port), on 127.0.0.1 unless `host` says otherwise,
 * behind a bearer token when `token` is set. Resolves with the server once listening.
 */
export async function startMetricsServer(
  port: number,
  options: MetricsServerOptions = {},
): Promise<http.Server> {
  const { host = '127.0.0.1', token = null } = options;
  const aggregator = options.cluster ? new AggregatorRegistry() : null;
  if (!options.cluster) processMetrics();
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('GET /metrics\n');
      return;
    }
    if (token !== null && !bearerMatches(req.headers.authorization, token)) {
      res
        .writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' })
        .end('GET /metrics needs Authorization: Bearer <METRICS_TOKEN>\n');
      return;
    }
    const body = aggregator ? aggregator.clusterMetrics() : register.metrics();
    body.then(
      (text) => res.writeHead(200, { 'content-type': register.contentType }).end(text),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${err.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return server;
}

export function portOf(server: http.Server): number {
  return (server.address() as AddressInfo).port;
}
