import { Type } from '@fastify/type-provider-typebox';
import { type MarketBriefView, marketBrief } from '../../../queries/agent.ts';
import type { RouteDeps } from '../../context.ts';
import { MarketIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer } from '../../serialize.ts';
import { sendMarketAnswer } from '../data-request.ts';
import type { Api } from '../types.ts';
import { MarketBriefRef, MarketBriefSchema } from './schemas.ts';

const briefJson = itemSerializer<MarketBriefView>(MarketBriefSchema);

export function registerMarketBrief(app: Api, deps: RouteDeps): void {
  app.get(
    '/agent/market-brief/:marketId',
    {
      config: { access: { category: 'agent', chainParam: 'marketId' }, errors: ['MARKET_NOT_FOUND'] },
      schema: {
        operationId: 'agentMarketBrief',
        summary: 'A market in brief, for agents',
        description:
          'A market in one sentence, its key figures, flags with their reasons (LIQUIDATABLE_POSITIONS, HIGH_UTILIZATION at ' +
          '95 % or more, STALE_ORACLE, NO_ORACLE, CONCENTRATED_BORROWERS at a Herfindahl index of 0.25 or more, ' +
          'BAD_DEBT_UNDER_STRESS when a 20 % collateral fall leaves bad debt, THIN_LIQUIDITY when a 10 % fall would repay ' +
          'more than the market holds, NO_USD_PRICE when a token has no USD price: its price null and, for the loan token, the USD figures; no position served) and its 10 and 20 % collateral stress. The figures are those of ' +
          'GET /risk/markets/{marketId}.',
        params: Type.Object({ marketId: MarketIdPath }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(MarketBriefRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) =>
      sendMarketAnswer(
        request,
        reply,
        deps,
        (model, key, nowSec) => marketBrief(model, key, nowSec),
        briefJson,
      ),
  );
}
