import { z } from 'zod';
import { checkShocks, MAX_SHOCKS, stressTest } from '../../queries/stress.ts';
import { chainIdsArg, limitArg, protocolArg } from '../args.ts';
import { defineTool } from '../tool.ts';

const LIMIT_MAX = 1000;

/** `GET /risk/stress` as a tool; shocks are an object of symbol to relative move instead of `SYM:x` text. */
export const stressTestTool = defineTool({
  name: 'stress_test',
  operationId: 'stressTest',
  title: 'Stress test',
  description:
    'Moves asset prices and reports, per market and in total, the positions newly liquidatable, the debt at risk, the ' +
    'collateral liquidators would seize and the estimated bad debt (every liquidatable position liquidated in full at ' +
    "its market's liquidation bonus), as GET /risk/stress does. Correlated assets follow their base unless shocked " +
    'themselves: ETH staking and restaking tokens with ETH or WETH, BTC wrappers with BTC or WBTC. A position of an ' +
    'account (Aave, Spark, Compound, Euler) is liquidatable when its account is, every token of the account moved.',
  category: 'risk',
  limitMax: LIMIT_MAX,
  input: {
    shocks: z
      .record(z.string().min(1).max(64), z.number())
      .describe(
        `Up to ${MAX_SHOCKS} assets by symbol with their relative price move, e.g. {"WETH": -0.2, "WBTC": -0.15} (-0.2 = a 20 % fall; above -1, at most 10).`,
      ),
    protocol: protocolArg,
    chainIds: chainIdsArg,
    limit: limitArg(LIMIT_MAX),
  },
  run(ctx, args) {
    const { limit, chainIds, clamped } = ctx.clamp(args);
    const shocks = checkShocks(Object.entries(args.shocks).map(([asset, change]) => ({ asset, change })));
    const found = stressTest(ctx.model, { shocks, protocol: args.protocol, chainIds, limit });
    return { data: found.items[0], found, clamped };
  },
});
