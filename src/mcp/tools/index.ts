import type { McpTool } from '../tool.ts';
import { getMarketTool } from './get-market.ts';
import { marketBriefTool } from './market-brief.ts';
import { positionsAtRiskTool } from './positions-at-risk.ts';
import { searchMarketsTool } from './search-markets.ts';
import { stressTestTool } from './stress-test.ts';
import { walletRiskTool } from './wallet-risk.ts';

/** Every tool of the MCP server, in the order tools/list gives them. */
export const TOOLS: readonly McpTool[] = [
  searchMarketsTool,
  getMarketTool,
  positionsAtRiskTool,
  walletRiskTool,
  stressTestTool,
  marketBriefTool,
];
