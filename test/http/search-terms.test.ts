import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { generateSandbox } from '../../src/ingest/sandbox/index.ts';
import { MAX_SEARCH_TERMS } from '../../src/queries/markets.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, GENEROUS_TIERS, modelOf, type TestApp } from '../helpers.ts';

/**
 * Regression: a query of many one-letter terms used to enumerate 3^terms tier combinations
 * (20 terms: 3.8 s and ~1 GB; 50 terms, 99 characters, a Free key: the heap ran out and the
 * process died). Now distinct terms are capped and search is linear in them.
 */

const clock = new ManualClock('2026-11-22T12:00:00Z');
let t: TestApp;
let free: string;
let pro: string;

before(async () => {
  // the default sandbox catalog: 4,000 markets, so one-letter terms match a lot
  const { markets } = generateSandbox({ profile: 'default' });
  t = await createTestApp({ live: modelOf(markets, [], clock), clock, tiers: GENEROUS_TIERS });
  free = await t.key('free');
  pro = await t.key('pro');
});
after(() => t.close());

const search = (query: string, key: string) =>
  t.get(`/api/v1/markets/search?query=${encodeURIComponent(query)}&limit=50`, key);

/** Wall time of one request, in ms: loose bounds only, the work itself is bounded in test/data. */
async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await f();
  return [r, performance.now() - t0];
}

describe('GET /markets/search: number of terms', () => {
  test('error: 50 one-letter terms (99 characters, a Free key) are refused at once; the server still serves', async () => {
    const letters = 'abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmn';
    const query = [...letters].join(' ');
    assert.equal(query.length, 99);
    const [res, ms] = await timed(() => search(query, free));
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().error, 'INVALID_PARAMETER');
    assert.deepEqual(res.json().details, [
      { parameter: 'query', problem: `must have at most ${MAX_SEARCH_TERMS} distinct terms (has 36)` },
    ]);
    assert.ok(ms < 1000, `${ms} ms`);
    const after = await search('weth', free);
    assert.equal(after.statusCode, 200);
    assert.ok(after.json().data.length > 0);
  });

  test('behavior: the cap counts distinct terms, case-insensitively', async () => {
    const cap = [...'aeiourst'].slice(0, MAX_SEARCH_TERMS);
    // at the cap, the commonest letters, none cached yet: answered
    const [atCap, ms] = await timed(() => search(cap.join(' '), pro));
    assert.equal(atCap.statusCode, 200);
    assert.ok(ms < 1000, `${ms} ms`);
    // the same terms repeated and in other cases count once
    const repeated = [...cap, ...cap.map((c) => c.toUpperCase()), ...cap].join(' ');
    const same = await search(repeated, pro);
    assert.equal(same.statusCode, 200);
    assert.deepEqual(same.json().data, atCap.json().data);
    assert.equal((await search(Array(50).fill('e').join(' '), free)).statusCode, 200);
    // one more distinct term: refused
    const over = await search([...cap, 'w'].join(' '), pro);
    assert.equal(over.statusCode, 400);
    assert.equal(over.json().details[0].parameter, 'query');
    assert.match(over.json().details[0].problem, new RegExp(`at most ${MAX_SEARCH_TERMS} distinct terms`));
  });

  test('behavior: many capped requests in a row do not pile up; normal search still answers', async () => {
    const heavy = [...'aeiourst'].slice(0, MAX_SEARCH_TERMS).join(' ');
    const [, ms] = await timed(async () => {
      for (let i = 0; i < 20; i++) {
        assert.equal(
          (await search(`${heavy.slice(0, -1)}${String.fromCharCode(97 + i)}`, pro)).statusCode,
          200,
        );
        assert.equal((await search(`${heavy} z${i}`, pro)).statusCode, 400);
      }
    });
    assert.ok(ms < 5000, `${ms} ms`);
    const res = await search('wsteth weth', pro);
    assert.equal(res.statusCode, 200);
    assert.ok(res.json().data.length > 0);
  });

  test('default: the OpenAPI description of query states the cap', async () => {
    const doc = (await t.get('/api/v1/openapi.json')).json();
    const ops = Object.values<Record<string, { operationId?: string; parameters?: unknown[] }>>(doc.paths);
    const op = ops.flatMap((o) => Object.values(o)).find((o) => o.operationId === 'searchMarkets');
    const params = (op?.parameters ?? []) as { name: string; description?: string }[];
    const query = params.find((p) => p.name === 'query');
    assert.match(query?.description ?? '', new RegExp(`at most ${MAX_SEARCH_TERMS} distinct`));
  });
});
