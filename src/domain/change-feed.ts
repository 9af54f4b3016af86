/**
 * The store's change feed read in rounds (markets, positions and vaults share one sequence
 * number but are read by separate queries): what read models and the ingesting process follow
 * it with. The reader is the store's (MarketDataStore's change feed reads).
 */
import { must } from './must.ts';
import type { StoredMarketChange, StoredPositionChange, StoredVaultChange } from './records/dataset.ts';

/** The change feed's reads (MarketDataStore). */
export interface ChangeFeed {
  positionChangesSince(after: number, limit: number): Promise<StoredPositionChange[]>;
  marketChangesSince(after: number, limit: number): Promise<StoredMarketChange[]>;
  vaultChangesSince(after: number, limit: number): Promise<StoredVaultChange[]>;
}

/** Changes of each kind read from the store per query while following the change feed. */
export const CHANGE_PAGE = 10_000;

/** One round of the change feed: each kind's changes in (from, upTo], in order. */
export interface ChangeRound {
  markets: StoredMarketChange[];
  positions: StoredPositionChange[];
  vaults: StoredVaultChange[];
  /** Every change at or below it has been read (the next round reads above it). */
  upTo: number;
}

/**
 * Reads the store's change feed above `from` up to `upTo` (the dataset's changeSeq as just
 * read), a page of each kind at a time. The kinds share one sequence but are read apart (not
 * one snapshot), so each round stops at the lowest of `upTo` and the full pages' ends: every
 * change at or below it is in the pages (a change written since moved above `upTo`, to a later
 * round or poll). Stops early when the feed holds nothing above the last round.
 */
export async function* changeRounds(
  store: ChangeFeed,
  from: number,
  upTo: number,
): AsyncGenerator<ChangeRound> {
  while (from < upTo) {
    const [positions, markets, vaults] = await Promise.all([
      store.positionChangesSince(from, CHANGE_PAGE),
      store.marketChangesSince(from, CHANGE_PAGE),
      store.vaultChangesSince(from, CHANGE_PAGE),
    ]);
    if (positions.length === 0 && markets.length === 0 && vaults.length === 0) return;
    let bound = upTo;
    for (const page of [positions, markets, vaults])
      if (page.length === CHANGE_PAGE) bound = Math.min(bound, must(page.at(-1), 'the last change').seq);
    const upToBound = <T extends { seq: number }>(list: T[]) => list.filter((c) => c.seq <= bound);
    yield {
      markets: upToBound(markets),
      positions: upToBound(positions),
      vaults: upToBound(vaults),
      upTo: bound,
    };
    from = bound;
  }
}
