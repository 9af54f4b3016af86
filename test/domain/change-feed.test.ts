import assert from 'node:assert/strict';
import { test } from 'node:test';
import { CHANGE_PAGE, type ChangeFeed, changeRounds } from '../../src/domain/change-feed.ts';
import type {
  StoredMarketChange,
  StoredPositionChange,
  StoredVaultChange,
} from '../../src/domain/records/dataset.ts';
import { makeMarket, makeVault } from '../helpers.ts';

const market = makeMarket();
const position = (seq: number): StoredPositionChange => ({
  marketKey: market.uniqueKey,
  user: `0x${seq.toString(16).padStart(40, '0')}`,
  collateralUsd: 1,
  borrowUsd: 1,
  supplyUsd: 0,
  healthFactor: 1,
  seq,
  source: 's',
});
const marketAt = (seq: number): StoredMarketChange => ({ record: market, seq, source: 's' });
const vaultAt = (seq: number): StoredVaultChange => ({ record: makeVault([market]), seq, source: 's' });

/** A feed whose three kinds are read from `rows`, each query at the state `at()` names. */
function feed(rows: { positions: number[]; markets: number[]; vaults: number[] }): ChangeFeed {
  const since =
    <T>(seqs: number[], make: (s: number) => T) =>
    async (after: number, limit: number) =>
      seqs
        .filter((s) => s > after)
        .sort((a, b) => a - b)
        .slice(0, limit)
        .map(make);
  return {
    positionChangesSince: (a, l) => since(rows.positions, position)(a, l),
    marketChangesSince: (a, l) => since(rows.markets, marketAt)(a, l),
    vaultChangesSince: (a, l) => since(rows.vaults, vaultAt)(a, l),
  };
}

async function read(f: ChangeFeed, from: number, upTo: number) {
  const seen: number[] = [];
  let last = from;
  for await (const r of changeRounds(f, from, upTo)) {
    for (const c of [...r.markets, ...r.positions, ...r.vaults]) {
      assert.ok(c.seq > last && c.seq <= r.upTo, `${c.seq} within the round (${last}, ${r.upTo}]`);
      seen.push(c.seq);
    }
    last = r.upTo;
  }
  return { seen: seen.sort((a, b) => a - b), last };
}

test('behavior: a round never goes past the sequence number it was asked for, so a pass written while the kinds are read apart is read whole later', async () => {
  // The positions were read before a pass committed (151..155 markets, 156..400 positions, 401
  // a vault), the vaults after: the vault must not carry the reader past the positions.
  const rows = { positions: [120], markets: [110], vaults: [] as number[] };
  const racing: ChangeFeed = {
    ...feed(rows),
    vaultChangesSince: async () => [vaultAt(401)],
  };
  const first = await read(racing, 100, 150);
  assert.deepEqual(first, { seen: [110, 120], last: 150 });
  const after = feed({
    positions: [120, ...Array.from({ length: 245 }, (_, i) => 156 + i)],
    markets: [110, 151, 152, 153, 154, 155],
    vaults: [401],
  });
  const second = await read(after, 150, 401);
  assert.equal(second.seen.length, 5 + 245 + 1);
  assert.equal(second.last, 401);
});

test('behavior: past a full page of one kind, the others are read up to its end, then the next round goes on', async () => {
  const n = CHANGE_PAGE + 2_000;
  const positions = Array.from({ length: n }, (_, i) => i + 1);
  const markets = [n + 1, n + 2];
  const vaults = [n + 3];
  const { seen, last } = await read(feed({ positions, markets, vaults }), 0, n + 3);
  assert.equal(last, n + 3);
  assert.deepEqual(seen, [...positions, n + 1, n + 2, n + 3]);
});
