import { z } from 'zod';
import { DEFAULT_TARGET_HEALTH_FACTOR, walletRisk } from '../../queries/agent.ts';
import { chainIdsArg } from '../args.ts';
import { defineTool } from '../tool.ts';

/** `GET /agent/wallet-risk/{address}` as a tool. */
export const walletRiskTool = defineTool({
  name: 'wallet_risk',
  operationId: 'agentWalletRisk',
  title: "A wallet's risk",
  description:
    "A wallet's borrow positions, weakest first, with a risk level, flags with their reasons (LIQUIDATABLE, " +
    'NEAR_LIQUIDATION, BELOW_TARGET, STALE_ORACLE) and, for each position, the debt to repay or the collateral to add ' +
    'that brings it to the target health factor, as GET /agent/wallet-risk/{address} serves it. Positions of an account ' +
    "(Aave, Spark, Compound, Euler; Euler's EVC sub-accounts with their owner) show the account's health factor.",
  category: 'agent',
  input: {
    address: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/)
      .describe('Wallet address (0x and 40 hex digits, any case).'),
    targetHealthFactor: z
      .number()
      .gt(1)
      .max(10)
      .optional()
      .describe(
        `The health factor to bring positions back to (default ${DEFAULT_TARGET_HEALTH_FACTOR}; 1 < x <= 10).`,
      ),
    chainIds: chainIdsArg,
  },
  run(ctx, args) {
    const { chainIds, clamped } = ctx.clamp(args);
    const found = walletRisk(
      ctx.model,
      args.address.toLowerCase(),
      { chainIds, targetHealthFactor: args.targetHealthFactor ?? DEFAULT_TARGET_HEALTH_FACTOR },
      Math.floor(ctx.nowMs / 1000),
    );
    return { data: found.items[0], found, clamped };
  },
});
