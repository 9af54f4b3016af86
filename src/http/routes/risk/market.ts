import { Type } from '@fastify/type-provider-typebox';
import { type MarketRiskView, marketRisk } from '../../../queries/stress.ts';
import type { RouteDeps } from '../../context.ts';
import { MarketIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer } from '../../serialize.ts';
import { sendMarketAnswer } from '../data-request.ts';
import type { Api } from '../types.ts';
import { MarketRiskRef, MarketRiskSchema } from './schemas.ts';

const marketRiskJson = itemSerializer<MarketRiskView>(MarketRiskSchema);

export function registerMarketRisk(app: Api, deps: RouteDeps): void {
  app.get(
    '/risk/markets/:marketId',
    {
      config: { access: { category: 'risk', chainParam: 'marketId' }, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'getMarketRisk',
        summary: "A market's risk",
        description:
          'Positions liquidatable now; collateral and debt at risk, collateral liquidators would seize and estimated bad debt ' +
          'under collateral price falls of 5, 10, 20 and 30 % (the loan price fixed; every liquidatable position liquidated in ' +
          "full at the market's liquidation bonus); the market's loan liquidity against the debt those liquidations repay; " +
          "concentration of the debt (top 10 borrowers' share, Herfindahl index); oracle health.",
        params: Type.Object({ marketId: MarketIdPath }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(MarketRiskRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) =>
      sendMarketAnswer(
        request,
        reply,
        deps,
        (model, key, nowSec) => marketRisk(model, key, nowSec),
        marketRiskJson,
      ),
  );
}
