import { isProtocol, type Protocol } from './enums.ts';

/** docs/decisions.md "Market identity": `<protocol>-<chainId>-<identifier>`, identifier without `-`, matched case-insensitively. */
const MARKET_ID = /^([a-z]+)-(\d{1,12})-([0-9a-z_]{1,200})$/;

/** What is wrong with an id that is not a market uniqueKey (INVALID_PARAMETER's problem). */
export const MARKET_ID_PROBLEM =
  'must be a market uniqueKey: <protocol>-<chainId>-<identifier>, e.g. morpho-1-0xb323…86cc';

export interface MarketId {
  /** The uniqueKey, lower-case. */
  key: string;
  protocol: Protocol;
  chainId: number;
}

/** Null when the id is not of the uniqueKey shape. */
export function parseMarketId(raw: string | undefined): MarketId | null {
  if (raw === undefined || raw.length > 256) return null;
  const key = raw.toLowerCase();
  const m = MARKET_ID.exec(key);
  if (!m) return null;
  const [, protocol = '', chainId] = m;
  if (!isProtocol(protocol)) return null;
  return { key, protocol, chainId: Number(chainId) };
}
