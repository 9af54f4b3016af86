import { MARKET_ID_PROBLEM, type MarketId, parseMarketId } from '../domain/market-id.ts';
import { ToolRefusal } from './tool.ts';

/** A market uniqueKey argument, parsed; INVALID_PARAMETER when it is not of that shape. */
export function marketIdOf(raw: string, parameter: string): MarketId {
  const id = parseMarketId(raw);
  if (!id) throw ToolRefusal.invalid([{ parameter, problem: MARKET_ID_PROBLEM }]);
  return id;
}
