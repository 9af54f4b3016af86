import type { onRequestAsyncHookHandler } from 'fastify';
import { MemoryPageSnapshots } from '../../data/page-snapshots.ts';
import { AnswerCache } from '../answer-cache.ts';
import type { AppDeps, RouteDeps } from '../context.ts';
import { CLIENT_HEADERS } from '../schemas.ts';
import { registerMarketBrief } from './agent/market-brief.ts';
import { registerMcp } from './agent/mcp.ts';
import { registerWalletRisk } from './agent/wallet-risk.ts';
import { registerAnalyticsOverview } from './analytics/overview.ts';
import { registerAnalyticsTimeseries } from './analytics/timeseries.ts';
import { registerClientRoutes } from './client/index.ts';
import { registerEventStream } from './events/stream.ts';
import { registerMarketDetail } from './markets/detail.ts';
import { registerMarketHistory } from './markets/history.ts';
import { registerMarketsList } from './markets/list.ts';
import { registerMarketsSearch } from './markets/search.ts';
import { registerOracleDetail } from './oracles/detail.ts';
import { registerOraclesList } from './oracles/list.ts';
import { registerOracleRounds } from './oracles/rounds.ts';
import { registerPortfolio } from './portfolios/detail.ts';
import { registerLiquidations } from './positions/liquidations.ts';
import { registerWalletPositions } from './positions/list.ts';
import { registerRatingRoutes } from './ratings/index.ts';
import { registerResearchReport } from './research/detail.ts';
import { registerResearchReports } from './research/list.ts';
import { registerMarketRisk } from './risk/market.ts';
import { registerPositionsAtRisk } from './risk/positions-at-risk.ts';
import { registerStressTest } from './risk/stress.ts';
import { registerHealth } from './service/health.ts';
import { registerRoot } from './service/root.ts';
import { registerTokenDetail } from './tokens/detail.ts';
import { registerTokensList } from './tokens/list.ts';
import type { Api } from './types.ts';
import { registerVaultDetail } from './vaults/detail.ts';
import { registerVaultsList } from './vaults/list.ts';

/**
 * Every route of /api/v1, from one place, by area. Routes behind `access` (the access pipeline:
 * authenticate, rate limit, quotas, category and chain access) declare their access in their
 * `config.access`; the service routes need no key.
 */
export async function registerRoutes(
  v1: Api,
  appDeps: AppDeps,
  access: onRequestAsyncHookHandler,
): Promise<void> {
  const deps: RouteDeps = {
    ...appDeps,
    answers: appDeps.answers ?? new AnswerCache(),
    pageSnapshots: appDeps.pageSnapshots ?? new MemoryPageSnapshots(appDeps.clock),
  };
  // Service
  registerRoot(v1);
  registerHealth(v1, deps);

  await v1.register(async (authed: Api) => {
    authed.addHook('onRequest', access);
    // A route that takes `limit` states its maximum once, in its access declaration.
    authed.addHook('onRoute', (route) => {
      const query = route.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
      if (query?.properties?.limit && route.config?.access?.limitMax === undefined) {
        throw new Error(`${route.method} ${route.url} takes limit but declares no access.limitMax`);
      }
    });
    // Markets
    registerMarketsSearch(authed, deps);
    registerMarketsList(authed, deps);
    registerMarketDetail(authed, deps);
    registerMarketHistory(authed, deps);
    // Tokens and oracles
    registerTokensList(authed, deps);
    registerTokenDetail(authed, deps);
    registerOraclesList(authed, deps);
    registerOracleDetail(authed, deps);
    registerOracleRounds(authed, deps);
    registerVaultsList(authed, deps);
    registerVaultDetail(authed, deps);
    // Positions, liquidations, portfolios
    registerWalletPositions(authed, deps);
    registerLiquidations(authed, deps);
    registerPortfolio(authed, deps);
    // Risk
    registerPositionsAtRisk(authed, deps);
    registerMarketRisk(authed, deps);
    registerStressTest(authed, deps);
    registerEventStream(authed, deps);
    // Analytics
    registerAnalyticsOverview(authed, deps);
    registerAnalyticsTimeseries(authed, deps);
    // Research
    registerResearchReports(authed, deps);
    registerResearchReport(authed, deps);
    // Agent
    registerWalletRisk(authed, deps);
    registerMarketBrief(authed, deps);
    registerMcp(authed, deps);
    // Ratings
    registerRatingRoutes(authed, deps);
    // Client self-service: account data, never stored by caches.
    await authed.register(async (client: Api) => {
      client.addHook('onSend', async (_request, reply) => {
        reply.header('cache-control', 'no-store');
      });
      // Their successes carry these headers (and any of their own); documented here for all six.
      client.addHook('onRoute', (route) => {
        const responses = route.schema?.response as Record<string, Record<string, unknown>> | undefined;
        for (const [code, schema] of Object.entries(responses ?? {})) {
          if (!code.startsWith('2')) continue;
          responses![code] = {
            ...schema,
            description: schema.description ?? `${route.schema?.summary ?? 'Success'}.`,
            headers: { ...CLIENT_HEADERS, ...(schema.headers as object | undefined) },
          };
        }
      });
      registerClientRoutes(client, deps);
    });
  });
}
