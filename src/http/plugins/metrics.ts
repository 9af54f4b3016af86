import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { processMetrics } from '../../metrics.ts';

/** Counts every answer by route pattern, method, status and tier, and times it (src/metrics.ts). */
export const metricsPlugin = fp(
  async (app: FastifyInstance) => {
    const m = processMetrics();
    app.addHook('onResponse', async (request, reply) => {
      const route = request.routeOptions.url ?? 'unmatched';
      m.requests.inc({
        route,
        method: request.method,
        status: String(reply.statusCode),
        tier: request.caller?.tier.id ?? 'none',
      });
      m.latency.observe({ route }, (performance.now() - request.startedAt) / 1000);
    });
  },
  { name: 'lrds-metrics' },
);
