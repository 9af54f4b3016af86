/**
 * Defaults against slow and greedy clients (slowloris, idle sockets) and overload. A slow client
 * is cut off by the headers and request timeouts, checked every connectionsCheckingIntervalMs
 * (Node's default of 30 s would let a slowloris hold a socket for up to 40 s).
 */
export const SERVER_DEFAULTS = {
  connectionTimeoutMs: 10_000,
  requestTimeoutMs: 10_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  connectionsCheckingIntervalMs: 1_000,
  maxRequestsPerSocket: 0,
  trustProxy: false,
  /**
   * Requests without a key (the document, docs, health, unknown paths, refused keys), per client
   * address: 5 a second, 30 at once after a pause. Loading the docs page takes 3; a load
   * balancer's health checks a few a minute.
   */
  anonymous: {
    ratePerSecond: 5,
    burst: 30,
    maxAddresses: 10_000,
  },
  pressure: {
    maxEventLoopDelayMs: 200,
    anonymousMaxEventLoopDelayMs: 100,
    maxHeapUsedBytes: 0,
    maxRssBytes: 0,
    sampleIntervalMs: 1_000,
    retryAfterSeconds: 2,
  },
} as const;
