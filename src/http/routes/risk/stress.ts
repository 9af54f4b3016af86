import { Type } from '@fastify/type-provider-typebox';
import { MAX_SHOCKS, parseShocks, type StressView, stressTest } from '../../../queries/stress.ts';
import type { RouteDeps } from '../../context.ts';
import { dataMeta } from '../../envelope.ts';
import { ChainIdsParam, LimitParam, ProtocolParam } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendAssembled } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { StressRef, StressSchema } from './schemas.ts';

const ACCESS = { category: 'risk', limitMax: 1000 } as const;
const stressJson = itemSerializer<StressView>(StressSchema);

export function registerStressTest(app: Api, deps: RouteDeps): void {
  app.get(
    '/risk/stress',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'stressTest',
        summary: 'Stress test',
        description:
          'Moves asset prices and reports, per market and in total, the positions newly liquidatable, the debt at risk, the ' +
          'collateral liquidators would seize and the estimated bad debt, liquidating every liquidatable position in full at ' +
          "its market's liquidation bonus. Correlated assets move with their base unless shocked themselves: ETH staking " +
          'and restaking tokens (wstETH, weETH, rETH, cbETH, rsETH, ezETH...) with ETH or WETH, BTC wrappers (cbBTC, tBTC, ' +
          'LBTC...) with BTC or WBTC. An isolated market moves by (1 + collateral move) / (1 + loan move) in health factor; ' +
          'a position of an account (Aave, Spark, Compound, Euler) is liquidatable when its account is, every token of the account moved. ' +
          '`meta.total` counts the moved markets with liquidatable positions.',
        querystring: Type.Object(
          {
            shocks: Type.String({
              minLength: 1,
              maxLength: 1000,
              description: `Up to ${MAX_SHOCKS} comma-separated \`SYMBOL:change\` pairs, change relative (-0.2 = a 20 % fall; above -1, at most 10). Symbols match case-insensitively; ETH and BTC name the groups.`,
              examples: ['WETH:-0.2,WBTC:-0.15'],
            }),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(StressRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const shocks = parseShocks(q.shocks);
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      return sendAssembled(
        request,
        reply,
        deps.answers.answer(request, model, nowMs, () => {
          const found = stressTest(model, { shocks, protocol: q.protocol, chainIds, limit });
          return {
            items: found.items.map(stressJson),
            list: false,
            meta: dataMeta(request, model, nowMs, found, clamped),
          };
        }),
      );
    },
  );
}
