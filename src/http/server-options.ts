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
  pressure: {
    maxEventLoopDelayMs: 200,
    maxHeapUsedBytes: 0,
    maxRssBytes: 0,
    sampleIntervalMs: 1_000,
    retryAfterSeconds: 2,
  },
} as const;
