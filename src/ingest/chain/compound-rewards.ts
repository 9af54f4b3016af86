/**
 * A comet's rewards (CometRewards): the calls that read its reward speeds and its rewards
 * contract's configuration of it, and the whole tokens a second they pay each side.
 */
import { parseAbi, zeroAddress } from 'viem';
import { must, mustSlice } from '../../domain/must.ts';
import { firstLine } from './rpc.ts';
import type { TokenMeta } from './tokens.ts';

type Hex = `0x${string}`;

/** Comet's reward tracking views (compound-finance/comet's signatures). */
const trackingAbi = parseAbi([
  'function baseTrackingSupplySpeed() view returns (uint256)',
  'function baseTrackingBorrowSpeed() view returns (uint256)',
  'function trackingIndexScale() view returns (uint256)',
  'function baseMinForRewards() view returns (uint256)',
]);

/** CometRewards' configuration of a comet (compound-finance/comet's signature). */
const cometRewardsAbi = parseAbi([
  'function rewardConfig(address comet) view returns (address token, uint64 rescaleFactor, bool shouldUpscale)',
]);

/** A comet's reward token and its rates: whole tokens a second, to all its suppliers and all its borrowers. */
export interface CometRewards {
  token: TokenMeta;
  supplyPerSecond: number;
  borrowPerSecond: number;
}

/** Calls per comet for its reward speeds, then its rewards contract's `rewardConfig` (none without one). */
export const REWARD_CALLS = 4;

export function rewardCalls(comet: Hex, rewards: string | null) {
  if (!rewards) return [];
  return [
    { address: comet, abi: trackingAbi, functionName: 'baseTrackingSupplySpeed' } as const,
    { address: comet, abi: trackingAbi, functionName: 'baseTrackingBorrowSpeed' } as const,
    { address: comet, abi: trackingAbi, functionName: 'trackingIndexScale' } as const,
    { address: comet, abi: trackingAbi, functionName: 'baseMinForRewards' } as const,
    { address: rewards as Hex, abi: cometRewardsAbi, functionName: 'rewardConfig', args: [comet] } as const,
  ];
}

/** A comet's reward speeds and its rewards contract's configuration of it, as read. */
export interface RewardsAnswer {
  supplySpeed: bigint;
  borrowSpeed: bigint;
  indexScale: bigint;
  /** Comet tracks a side only while its base total (principal) is at least this. */
  minForRewards: bigint;
  token: string;
  rescaleFactor: bigint;
  shouldUpscale: boolean;
}

/**
 * The answers of `rewardCalls`: null without a rewards contract; why not, when it or the comet
 * refused, or it names no reward token for the comet.
 */
export function rewardsAnswer(
  r: readonly { status: 'success' | 'failure'; result?: unknown; error?: Error }[],
): RewardsAnswer | { problem: string } | null {
  if (r.length === 0) return null;
  const refused = r.find((x) => x.status !== 'success');
  if (refused) return { problem: firstLine(refused.error) };
  const [supplySpeed, borrowSpeed, indexScale, minForRewards] = mustSlice(
    r.map((x) => x.result as bigint),
    0,
    REWARD_CALLS,
    'reward speed answers',
  );
  const [token, rescaleFactor, shouldUpscale] = must(r[REWARD_CALLS], 'rewardConfig answer')
    .result as readonly [string, bigint, boolean];
  if (token === zeroAddress) return { problem: 'its rewards contract names no reward token for it' };
  if (!indexScale || rescaleFactor === 0n)
    return { problem: 'a tracking index scale or rescale factor of 0' };
  return {
    supplySpeed,
    borrowSpeed,
    indexScale,
    minForRewards,
    token: token.toLowerCase(),
    rescaleFactor,
    shouldUpscale,
  };
}

/**
 * Whole reward tokens a second to all suppliers and all borrowers: Comet accrues `speed ×
 * 1e6 / trackingIndexScale` tracking units (6 decimals) a second across the side, which
 * CometRewards rescales to the token's units (`× rescaleFactor` when it upscales, else `÷`).
 */
export function cometRewards(
  a: RewardsAnswer | { problem: string } | null,
  tokens: ReadonlyMap<string, TokenMeta>,
  totals: { totalSupplyBase: bigint; totalBorrowBase: bigint },
): CometRewards | { problem: string } | null {
  if (!a || 'problem' in a) return a;
  const token = tokens.get(a.token);
  if (!token || token.decimals === null)
    return { problem: `reward token ${a.token} does not answer decimals()` };
  const { decimals } = token;
  // A side below baseMinForRewards accrues nothing (Comet does not move its tracking index).
  const whole = (speed: bigint, base: bigint) => {
    if (base < a.minForRewards) return 0;
    const units = (Number(speed) * 1e6) / Number(a.indexScale);
    const rescaled = a.shouldUpscale ? units * Number(a.rescaleFactor) : units / Number(a.rescaleFactor);
    return rescaled / 10 ** decimals;
  };
  return {
    token,
    supplyPerSecond: whole(a.supplySpeed, BigInt(totals.totalSupplyBase)),
    borrowPerSecond: whole(a.borrowSpeed, BigInt(totals.totalBorrowBase)),
  };
}
