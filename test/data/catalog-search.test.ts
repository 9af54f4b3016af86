import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import v8 from 'node:v8';
import vm from 'node:vm';
import fc from 'fast-check';
import { Catalog, type MarketFilter } from '../../src/data/catalog.ts';
import { TERM_CACHE_BYTES, TERM_CACHE_ENTRIES } from '../../src/data/search/term-match.ts';
import { searchTerms } from '../../src/data/search/vocabulary.ts';
import { newSearchWork, totalWork } from '../../src/data/search/work.ts';
import { PROTOCOLS } from '../../src/domain/enums.ts';
import type { MarketRecord } from '../../src/domain/types.ts';
import { generateSandbox, SANDBOX_AS_OF } from '../../src/ingest/sandbox/index.ts';

/**
 * Search on the default sandbox catalog (4,000 real-looking markets): results against a naive
 * scan of every market, and the work done (elements read, counted by the catalog) against a
 * budget linear in the number of distinct terms, for adversarial queries. No wall-clock time.
 */

const { markets } = generateSandbox({ profile: 'default' });
const catalog = new Catalog(markets, SANDBOX_AS_OF);
const n = catalog.size;
const index = catalog.indexStats();

/**
 * Work budget per distinct term: finding the term's tokens (at most every token of the
 * vocabulary), reading their postings (at most every posting), building its list (at most one
 * pass over the catalog), and ranking (a walk of at most n markets, then per other term at most
 * one lookup or a gallop: about 7 reads a market). Nothing grows with the number of terms but
 * this sum, so 8 terms cost at most 8 times one.
 */
const perTermBudget = index.tokens + index.postings + 8 * n;

// --- the naive scan: docs/decisions.md "Search" read literally ------------------------------------------

const WORD_SPLIT = /[^\p{L}\p{N}.+]+/u;
const norm = (s: string) => s.normalize('NFKC').toLowerCase();

interface NaiveMarket {
  m: MarketRecord;
  symbols: string[];
  words: string[];
}

const naive: NaiveMarket[] = markets.map((m) => {
  const symbols = [
    m.collateral,
    m.loan,
    `${m.collateral}/${m.loan}`,
    ...(m.vaultSymbol ? [m.vaultSymbol] : []),
  ].map(norm);
  const words = [
    ...symbols,
    ...[m.collateralName, m.loanName, m.label ?? '', m.vaultSymbol ?? ''].flatMap((t) =>
      norm(t).split(WORD_SPLIT),
    ),
  ].filter(Boolean);
  return { m, symbols, words };
});

function naiveTier(x: NaiveMarket, term: string): number {
  if (x.symbols.includes(term)) return 3;
  if (x.words.some((w) => w.startsWith(term))) return 2;
  if (x.words.some((w) => w.includes(term))) return 1;
  return 0;
}

function naiveSearch(
  query: string,
  filter: MarketFilter,
  limit: number,
  supplyOf: (m: MarketRecord) => number = (m) => m.supply ?? -1,
): string[] {
  const terms = [...new Set(norm(query).split(/\s+/).filter(Boolean))];
  if (terms.length === 0) return [];
  const hits: { key: string; score: number; supply: number }[] = [];
  for (const x of naive) {
    if (filter.protocol !== undefined && x.m.protocol !== filter.protocol) continue;
    if (filter.chainIds !== undefined && !filter.chainIds.includes(x.m.chainId)) continue;
    let score = 0;
    for (const t of terms) {
      const tier = naiveTier(x, t);
      if (tier === 0) {
        score = 0;
        break;
      }
      score += tier;
    }
    if (score > 0) hits.push({ key: x.m.uniqueKey, score, supply: supplyOf(x.m) });
  }
  hits.sort((a, b) => b.score - a.score || b.supply - a.supply || (a.key < b.key ? -1 : 1));
  return hits.slice(0, limit).map((h) => h.key);
}

const keysOf = (ords: number[]) => ords.map((o) => catalog.recordAt(o).uniqueKey);

// --- arbitraries --------------------------------------------------------------------------

/** Words of the catalog, and their short prefixes and inner pieces: terms that match a lot. */
const pool = (() => {
  const s = new Set<string>();
  for (const x of naive.slice(0, 400)) {
    for (const w of x.words) {
      s.add(w);
      for (let k = 1; k <= Math.min(3, w.length); k++) s.add(w.slice(0, k));
      if (w.length > 3) s.add(w.slice(1, 3));
    }
  }
  return [...s].sort();
})();

const letters = [...'abcdefghijklmnopqrstuvwxyz0123456789./+-'];

/** Terms taken from one market's words (whole, prefix or inner piece): queries with answers. */
const marketTermsArb = fc
  .tuple(
    fc.integer({ min: 0, max: naive.length - 1 }),
    fc.array(fc.tuple(fc.nat(), fc.nat(), fc.nat()), { minLength: 1, maxLength: 8 }),
  )
  .map(([i, picks]) => {
    const words = naive[i]!.words;
    return picks.map(([w, a, b]) => {
      const word = words[w % words.length]!;
      const from = a % word.length;
      return word.slice(from, from + 1 + (b % (word.length - from)));
    });
  });
const chainsOf = [...new Set(markets.map((m) => m.chainId))];
/** Mostly no filter (a filter leaves few markets to rank), else a protocol and/or chains. */
const filterArb: fc.Arbitrary<MarketFilter> = fc.oneof(
  { weight: 2, arbitrary: fc.constant({}) },
  {
    weight: 1,
    arbitrary: fc.record(
      {
        protocol: fc.constantFrom(...PROTOCOLS),
        chainIds: fc.uniqueArray(fc.constantFrom(...chainsOf), { minLength: 1, maxLength: 6 }),
      },
      { requiredKeys: [] },
    ),
  },
);

const queryArb = fc
  .oneof(
    // many one-letter terms: 3^terms combinations in the old algorithm
    fc
      .array(fc.constantFrom(...letters), { minLength: 1, maxLength: 50, size: 'max' })
      .map((a) => a.join(' ')),
    fc
      .array(fc.constantFrom(...'aeiou'), { minLength: 1, maxLength: 50, size: 'max' })
      .map((a) => a.join(' ')),
    // pieces of one market's words, some of them repeated, with letters around
    marketTermsArb.map((a) => [...a, ...a].join(' ')),
    fc
      .tuple(marketTermsArb, fc.array(fc.constantFrom(...letters), { maxLength: 10 }))
      .map(([a, b]) => [...a, ...b].join(' ')),
    // one term over and over
    fc
      .tuple(fc.constantFrom('e', 'a', 'eth', 'usd', 'weth', 'wsteth/weth'), fc.integer({ min: 1, max: 40 }))
      .map(([t, k]) => Array(k).fill(t).join(' ')),
    // real words and pieces of them, mixed with letters
    fc
      .array(fc.oneof(fc.constantFrom(...pool), fc.constantFrom(...letters)), {
        minLength: 1,
        maxLength: 30,
        size: 'max',
      })
      .map((a) => a.join(' ')),
    // long words
    fc
      .array(fc.string({ minLength: 10, maxLength: 100 }), { minLength: 1, maxLength: 4 })
      .map((a) => a.join(' ')),
    // unicode: graphemes, raw code units (lone surrogates), NFKC expansions with spaces inside
    fc.string({ unit: 'grapheme', minLength: 1, maxLength: 100 }),
    fc.string({ unit: 'binary', minLength: 1, maxLength: 100 }),
    fc
      .array(fc.constantFrom('ﷺ', 'ﬃ', 'Ⅻ', 'İ', 'ß', 'ｅ', 'Ｅ', '\u00a0', '\u3000', 'e\u0301'), {
        maxLength: 100,
      })
      .map((a) => a.join('')),
  )
  .map((q) => q.slice(0, 100));

// --- tests --------------------------------------------------------------------------------

describe('Catalog.search: same answers as a naive scan', () => {
  test('behavior: every single pool term (sparse and dense term lists)', () => {
    // Terms are kept sparse (sorted list) or dense (tier per market) by how much they match;
    // the pool must exercise both, and the list built by sorting and by a pass over the catalog.
    const counts = pool.map((t) => naive.filter((x) => naiveTier(x, t) > 0).length);
    assert.ok(
      counts.some((c) => c > n / 8),
      'a dense term',
    );
    assert.ok(
      counts.some((c) => c > 0 && c * Math.ceil(Math.log2(c + 1)) <= n),
      'a sorted sparse term',
    );
    assert.ok(
      counts.some((c) => c <= n / 8 && c * Math.ceil(Math.log2(c + 1)) > n),
      'a sparse term read back by a pass',
    );
    for (const term of pool) {
      const want = naiveSearch(term, {}, n);
      for (const limit of [1, 50, n]) {
        assert.deepEqual(keysOf(catalog.search(term, {}, limit)), want.slice(0, limit), `${term} ${limit}`);
      }
    }
  });

  test('behavior: multi-term queries, filters and limits (property)', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          { weight: 3, arbitrary: marketTermsArb },
          { weight: 1, arbitrary: fc.array(fc.constantFrom(...pool), { minLength: 1, maxLength: 8 }) },
        ),
        filterArb,
        fc.integer({ min: 1, max: 200 }),
        (terms, filter, limit) => {
          const q = terms.join(' ');
          assert.deepEqual(keysOf(catalog.search(q, filter, limit)), naiveSearch(q, filter, limit));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('Catalog while prices move', () => {
  // The loan tokens most markets use, each moved by its own factor: supply in USD changes
  // with the loan token's price, and the order by supply with it.
  const loans = new Map<string, { chainId: number; token: string; price: number; n: number }>();
  for (const m of markets) {
    const k = `${m.chainId}:${m.loanAddress.toLowerCase()}`;
    const l = loans.get(k) ?? {
      chainId: m.chainId,
      token: m.loanAddress.toLowerCase(),
      price: m.loanPrice,
      n: 0,
    };
    l.n++;
    loans.set(k, l);
  }
  const busiest = [...loans.values()].sort((a, b) => b.n - a.n).slice(0, 12);
  const factorArb = fc.array(fc.double({ min: 0.05, max: 20, noNaN: true }), {
    minLength: busiest.length,
    maxLength: busiest.length,
  });

  test('behavior: after loan prices move, lists and search ties follow the new supply (property)', () => {
    fc.assert(
      fc.property(
        factorArb,
        filterArb,
        fc.integer({ min: 1, max: 200 }),
        marketTermsArb,
        (factors, filter, limit, terms) => {
          const moved = new Catalog(markets, SANDBOX_AS_OF);
          // A token's new price; each market scales from its own snapshot price of it.
          const price = new Map<string, number>();
          busiest.forEach((l, i) => {
            moved.applyPrices([{ chainId: l.chainId, token: l.token, ratio: factors[i]! }]);
            price.set(`${l.chainId}:${l.token}`, factors[i]!);
          });
          const supplyOf = (m: MarketRecord) => {
            const p = price.get(`${m.chainId}:${m.loanAddress.toLowerCase()}`);
            return p === undefined || !(m.loanPrice! > 0) ? m.supply! : m.supply! * p;
          };
          const keys = (ords: number[]) => ords.map((o) => moved.recordAt(o).uniqueKey);
          const want = markets
            .filter((m) => filter.protocol === undefined || m.protocol === filter.protocol)
            .filter((m) => filter.chainIds === undefined || filter.chainIds.includes(m.chainId))
            .sort((a, b) => supplyOf(b) - supplyOf(a) || (a.uniqueKey < b.uniqueKey ? -1 : 1))
            .map((m) => m.uniqueKey);
          assert.deepEqual(keys(moved.list(filter, 0, limit)), want.slice(0, limit));
          assert.deepEqual(keys(moved.list(filter, 7, limit)), want.slice(7, 7 + limit));
          const q = terms.join(' ');
          assert.deepEqual(keys(moved.search(q, filter, limit)), naiveSearch(q, filter, limit, supplyOf));
        },
      ),
      { numRuns: 25 },
    );
  });

  test('behavior: a loan price move scales the served supply, borrow and available; ords stay', () => {
    const moved = new Catalog(markets, SANDBOX_AS_OF);
    const l = busiest[0]!;
    const m = markets.find((x) => x.chainId === l.chainId && x.loanAddress.toLowerCase() === l.token)!;
    const ord = moved.ordOf(m.uniqueKey)!;
    assert.ok(moved.applyPrices([{ chainId: l.chainId, token: l.token, ratio: 2 }]) >= l.n);
    assert.equal(moved.ordOf(m.uniqueKey), ord);
    const v = moved.recordAt(ord);
    assert.equal(v.supply, Math.round(m.supply * 2 * 100) / 100);
    assert.equal(v.borrow, Math.round(m.borrow * 2 * 100) / 100);
    assert.equal(v.loanPrice, Number((m.loanPrice * 2).toPrecision(8)));
    assert.equal(moved.basePrices(ord).loan, m.loanPrice);
    const [head] = moved.json(
      ord,
      SANDBOX_AS_OF,
      (x) => Buffer.from(JSON.stringify(x)),
      () => Buffer.alloc(0),
    );
    const json = JSON.parse(Buffer.from(head).toString());
    assert.equal(json.supply, v.supply);
  });
});

describe('Catalog.search: work linear in distinct terms', () => {
  test('behavior: adversarial queries stay within T x (tokens + postings + 8n) reads, first and cached', () => {
    fc.assert(
      fc.property(queryArb, filterArb, fc.integer({ min: 1, max: 200 }), (query, filter, limit) => {
        const terms = searchTerms(query).length;
        const budget = terms * perTermBudget;
        const first = newSearchWork();
        const got = catalog.search(query, filter, limit, first);
        assert.equal(first.terms, terms);
        assert.ok(got.length <= limit);
        assert.ok(totalWork(first) <= budget, `${JSON.stringify(query)}: ${totalWork(first)} > ${budget}`);
        // cached: no term is built again, and ranking alone is within 8 reads a market a term
        const again = newSearchWork();
        assert.deepEqual(catalog.search(query, filter, limit, again), got);
        assert.equal(again.misses, 0);
        assert.ok(totalWork(again) <= terms * 8 * n, `${JSON.stringify(query)}: cached ${totalWork(again)}`);
        if (terms <= 10) assert.deepEqual(keysOf(got), naiveSearch(query, filter, limit));
      }),
      { numRuns: 400 },
    );
    assert.ok(catalog.termCacheStats().bytes <= TERM_CACHE_BYTES);
  });

  test('behavior: 50 one-letter terms read no more than 50 times what one does', () => {
    const query =
      'a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 4 5 6 7 8 9 a b c d e f g h i j k l m n';
    const cat = new Catalog(markets, SANDBOX_AS_OF);
    const w = newSearchWork();
    cat.search(query, {}, 50, w);
    const terms = searchTerms(query).length;
    assert.equal(terms, 36);
    assert.ok(totalWork(w) <= terms * perTermBudget);
    // each one-letter term alone, cold, on a fresh catalog
    const single = (t: string) => {
      const c = new Catalog(markets, SANDBOX_AS_OF);
      const one = newSearchWork();
      c.search(t, {}, 50, one);
      return totalWork(one);
    };
    const heaviest = Math.max(...['a', 'e', 'u', 's', 't'].map(single));
    assert.ok(totalWork(w) <= terms * (heaviest + 8 * n), `${totalWork(w)} vs ${terms} x ${heaviest}`);
  });

  test('behavior: a cached one-term query reads about `limit` elements, whatever the catalog size', () => {
    catalog.search('usdc', {}, 10);
    const w = newSearchWork();
    assert.equal(catalog.search('usdc', {}, 10, w).length, 10);
    assert.ok(w.reads <= 10, `${w.reads}`);
  });
});

describe('Catalog term cache', () => {
  test('behavior: a million unique unmatched queries keep it bounded and the heap flat', () => {
    const cat = new Catalog(markets.slice(0, 200), SANDBOX_AS_OF);
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const heap = () => {
      gc();
      gc();
      return process.memoryUsage().heapUsed;
    };
    const run = (from: number, to: number) => {
      for (let i = from; i < to; i++) cat.search(`ζ${i.toString(36)}`, {}, 10);
    };
    run(0, 2 * TERM_CACHE_ENTRIES); // fill the cache, so the baseline holds a full one
    const full = heap();
    run(2 * TERM_CACHE_ENTRIES, 1_000_000);
    const stats = cat.termCacheStats();
    assert.equal(stats.entries, TERM_CACHE_ENTRIES);
    assert.ok(stats.bytes <= TERM_CACHE_BYTES);
    // ~10,000 entries of a few hundred bytes: a few MB at most
    assert.ok(stats.bytes <= 5 * 1024 * 1024, `${stats.bytes}`);
    const grown = heap() - full;
    assert.ok(grown < 16 * 1024 * 1024, `heap grew ${(grown / 2 ** 20).toFixed(1)} MiB`);
  });
});
