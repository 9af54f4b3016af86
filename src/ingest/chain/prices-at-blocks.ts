/**
 * Liquidations are valued at their block's prices where the RPC still holds that block's state
 * (a first sync or a catch-up reads them after the fact): the file's feeds, and each protocol's
 * oracle, read at the block, for the newest MAX_PRICED_BLOCKS blocks of a pass; the others, and
 * blocks that cannot be read (a pruned node), at the pass's prices, named in an item.
 */

import { must } from '../../domain/must.ts';
import type { MarketRecord } from '../../domain/types.ts';
import type { ItemReport } from '../contract.ts';
import type { FeedConfig } from '../sources-file.ts';
import { readFeeds } from './chainlink.ts';
import type { LiquidationPrices } from './liquidation.ts';
import { pricer, type Token } from './pricing.ts';
import { type ChainRpc, firstLine, isMissingState } from './rpc.ts';

/** Distinct blocks whose liquidations are priced at the block (more are priced at the pass's prices). */
export const MAX_PRICED_BLOCKS = 200;

/** The blocks a walk over past blocks could not price: left out (more than MAX_PRICED_BLOCKS) or unreadable. */
export interface PricedBlocks {
  unread: number[];
  /** The first read's error (null: the unread blocks were only left out). */
  error: string | null;
}

/**
 * Walks the newest MAX_PRICED_BLOCKS distinct blocks of `items` (an RPC keeps recent state; older
 * ones are left out), handing `read` each block's items and the USD prices of the file's feeds
 * read at that block. A block whose read fails (a pruned node, a failed request) is left out: its
 * items are priced at the pass's prices.
 */
export async function atPricedBlocks<T extends { block: number }>(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  items: readonly T[],
  feedSymbolOf: (t: Token) => string | null,
  read: (block: number, here: T[], usdOf: ReturnType<typeof pricer>) => void | Promise<void>,
): Promise<PricedBlocks> {
  const byBlock = new Map<number, T[]>();
  for (const item of items) {
    const here = byBlock.get(item.block);
    if (here) here.push(item);
    else byBlock.set(item.block, [item]);
  }
  const blocks = [...byBlock.keys()].sort((a, b) => a - b);
  const unread = blocks.slice(0, Math.max(0, blocks.length - MAX_PRICED_BLOCKS));
  let error: string | null = null;
  // Newest first: a node that no longer keeps a block's state keeps none of the older blocks', so
  // they are not asked (each refusal costs the transport's retries).
  const walk = blocks.slice(-MAX_PRICED_BLOCKS).reverse();
  for (const [i, block] of walk.entries()) {
    try {
      const usdOf = pricer((await readFeeds(rpc, feeds, BigInt(block))).readings, feedSymbolOf);
      await read(block, must(byBlock.get(block), `items of block ${block}`), usdOf);
    } catch (err) {
      // viem's first line of an RPC's refusal is generic: its details say why (a pruned node).
      const details = (err as { details?: unknown }).details;
      const why = `${firstLine(err as Error)}${typeof details === 'string' && details ? ` ${details.split('\n')[0]}` : ''}`;
      error ??= why;
      if (isMissingState(err)) {
        // The reason for most of the blocks left: the node's missing state.
        error = why;
        unread.push(...walk.slice(i));
        break;
      }
      unread.push(block);
    }
  }
  unread.sort((a, b) => a - b);
  return { unread, error };
}

/** The pass's item naming what a walk over past blocks could not price, or none. */
export function unpricedBlocks(kind: string, what: string, r: PricedBlocks): ItemReport[] {
  if (r.unread.length === 0) return [];
  return [
    {
      id: `${kind}:prices-at-blocks`,
      ok: false,
      error: `${r.unread.length} ${what} blocks (${r.unread[0]} to ${r.unread.at(-1)}) priced at this pass's prices${r.error ? `: ${r.error}` : ` (more than ${MAX_PRICED_BLOCKS} blocks)`}`,
    },
  ];
}

/**
 * The USD prices of markets' tokens at past blocks by the file's feeds alone, by
 * `${block}:${uniqueKey}` (Fluid: its oracle is read at the pass only): a collateral no feed
 * prices keeps its market's ratio to the loan token. A block whose loan token no feed prices is
 * left out (the pass's prices serve).
 */
export async function feedPricesAtBlocks(
  rpc: ChainRpc,
  feeds: readonly FeedConfig[],
  wanted: readonly { block: number; record: MarketRecord }[],
  feedSymbolOf: (t: Token) => string | null,
): Promise<PricedBlocks & { at: Map<string, LiquidationPrices> }> {
  const at = new Map<string, LiquidationPrices>();
  const walked = await atPricedBlocks(rpc, feeds, wanted, feedSymbolOf, (block, here, usdOf) => {
    for (const { record: r } of here) {
      const loanUsd = usdOf({ address: r.loanAddress, symbol: r.loan });
      const collateralUsd =
        usdOf({ address: r.collateralAddress, symbol: r.collateral }) ??
        (loanUsd !== null && r.loanPrice !== null && r.collateralPrice !== null && r.loanPrice > 0
          ? (r.collateralPrice / r.loanPrice) * loanUsd
          : null);
      at.set(`${block}:${r.uniqueKey}`, { loanUsd, collateralUsd });
    }
  });
  return { ...walked, at };
}

/**
 * The prices a liquidation in `r` is valued at, token by token: its block's (`at`) where read
 * there, else the market's (null where it has none, "Real sources" (docs/decisions.md)).
 */
export function pricesAt(
  at: LiquidationPrices | null | undefined,
  r: Pick<MarketRecord, 'loanPrice' | 'collateralPrice'>,
): LiquidationPrices {
  return { loanUsd: at?.loanUsd ?? r.loanPrice, collateralUsd: at?.collateralUsd ?? r.collateralPrice };
}
