import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Catalog } from '../../src/data/catalog.ts';
import { JSON_CACHE_BYTES, JSON_CACHE_ENTRIES, RiskIndex } from '../../src/data/risk-index.ts';
import { PositionColumnsBuilder } from '../../src/domain/position-columns.ts';
import { makeMarket } from '../helpers.ts';

/** The serialized-positions cache is an LRU bounded by entries and by bytes. */

const market = makeMarket();
const catalog = new Catalog([market], 0);
const count = JSON_CACHE_ENTRIES + 5_000;
const builder = new PositionColumnsBuilder(count);
for (let i = 0; i < count; i++) {
  builder.push(0, {
    user: `0x${i.toString(16).padStart(40, '0')}`,
    collateralUsd: 10_000,
    borrowUsd: 8_000 + i,
    supplyUsd: 0,
    healthFactor: (10_000 * market.lltv) / (8_000 + i),
  });
}
const cols = builder.build();

describe('RiskIndex json cache', () => {
  test('behavior: bounded by entries; a hit is served from the cache, least recently used goes first', () => {
    const index = new RiskIndex(catalog, cols);
    let serialized = 0;
    const serialize = () => {
      serialized++;
      return new Uint8Array(16);
    };
    for (let i = 0; i < count; i++) index.json(i, serialize);
    assert.equal(serialized, count);
    assert.equal(index.jsonCacheStats().entries, JSON_CACHE_ENTRIES);
    // the most recent ones are cached, the oldest were dropped
    index.json(count - 1, serialize);
    assert.equal(serialized, count);
    index.json(0, serialize);
    assert.equal(serialized, count + 1);
  });

  test('behavior: bounded by bytes when positions serialize large', () => {
    const index = new RiskIndex(catalog, cols);
    const big = 4096; // 20,000 of these would be 80 MB
    for (let i = 0; i < count; i++) index.json(i, () => new Uint8Array(big));
    const stats = index.jsonCacheStats();
    assert.ok(stats.bytes <= JSON_CACHE_BYTES, `${stats.bytes}`);
    assert.ok(stats.entries < JSON_CACHE_ENTRIES);
    assert.ok(stats.entries >= Math.floor(JSON_CACHE_BYTES / (big + 200)), `${stats.entries}`);
  });
});
