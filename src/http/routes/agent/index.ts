import type { Area } from '../types.ts';
import { registerMarketBrief } from './market-brief.ts';
import { registerMcp } from './mcp.ts';
import { MarketBriefSchema, WalletRiskSchema } from './schemas.ts';
import { registerWalletRisk } from './wallet-risk.ts';

/** Agent: a wallet's risk, a market's brief, the MCP server (category agent). */
export const agent: Area = {
  scope: 'data',
  tag: {
    name: 'Agent',
    description: 'For AI agents: answers made for them, and the MCP server (agent category).',
  },
  schemas: { WalletRisk: WalletRiskSchema, MarketBrief: MarketBriefSchema },
  register(app, deps) {
    registerWalletRisk(app, deps);
    registerMarketBrief(app, deps);
    registerMcp(app, deps);
  },
};
