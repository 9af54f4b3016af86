import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { type ClientOptions, isApiError, LrdsClient, LrdsResponseError } from '../../sdk/src/index.ts';

/**
 * Retries, paging by cursor and errors, against a tiny local HTTP server that answers from a
 * script; the client's sleep is injected and records the waits instead of waiting.
 */

interface Answer {
  status: number;
  headers?: Record<string, string>;
  /** An object is sent as JSON, a string as it is. */
  body?: unknown;
}

interface Seen {
  method: string;
  url: URL;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const servers: http.Server[] = [];
after(async () => {
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
});

const OK: Answer = {
  status: 200,
  body: { data: [], meta: { latencyMs: 1, freshness: 'live', source: 'aave' } },
};
const refusal = (error: string, extra: Record<string, unknown> = {}) => ({
  error,
  message: `${error} for the test`,
  ...extra,
});

/** A server answering each request with the next answer of `script` (the last one repeats). */
async function scripted(script: Answer[] | ((seen: Seen) => Answer)) {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method ?? '',
        url: new URL(req.url ?? '/', 'http://localhost'),
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      };
      seen.push(s);
      const answer =
        typeof script === 'function' ? script(s) : script[Math.min(seen.length, script.length) - 1]!;
      const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? {});
      res.writeHead(answer.status, {
        'content-type': typeof answer.body === 'string' ? 'text/html' : 'application/json',
        'x-request-id': `req-${seen.length}`,
        ...answer.headers,
      });
      res.end(text);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const waits: number[] = [];
  const client = (options: Partial<ClientOptions> = {}) =>
    new LrdsClient({
      baseUrl: `http://127.0.0.1:${port}/api/v1/`,
      apiKey: 'lrds_live_test',
      sleep: async (ms) => {
        waits.push(ms);
      },
      random: () => 0.5,
      ...options,
    });
  return { seen, waits, client };
}

describe('retries', () => {
  test('behavior: a 429 with Retry-After twice, then 200: waits as told, then succeeds', async () => {
    const limited: Answer = {
      status: 429,
      headers: { 'retry-after': '2' },
      body: refusal('RATE_LIMIT_EXCEEDED'),
    };
    const { seen, waits, client } = await scripted([limited, limited, OK]);
    const res = await client().listMarkets({ limit: 5 });
    assert.deepEqual(res.data, []);
    assert.equal(seen.length, 3);
    assert.deepEqual(waits, [2000, 2000]);
    // Every attempt is the same request, with the key.
    for (const s of seen) {
      assert.equal(s.url.pathname, '/api/v1/markets');
      assert.equal(s.url.search, '?limit=5');
      assert.equal(s.headers.authorization, 'Bearer lrds_live_test');
    }
  });

  test("behavior: the body's retryAfter (to the ms) is preferred to the header's whole seconds", async () => {
    const { waits, client } = await scripted([
      {
        status: 429,
        headers: { 'retry-after': '1' },
        body: refusal('RATE_LIMIT_EXCEEDED', { retryAfter: 0.412 }),
      },
      OK,
    ]);
    await client().listMarkets();
    assert.deepEqual(waits, [412]);
  });

  test('behavior: a 503 with a body retryAfter is retried after it', async () => {
    const { seen, waits, client } = await scripted([
      { status: 503, body: refusal('SERVICE_UNAVAILABLE', { retryAfter: 1.5 }) },
      OK,
    ]);
    await client().searchMarkets({ query: 'WETH' });
    assert.equal(seen.length, 2);
    assert.deepEqual(waits, [1500]);
  });

  test('behavior: a Retry-After date is a wait from now (injected clock)', async () => {
    const now = Date.parse('2026-11-24T12:00:00Z');
    const { waits, client } = await scripted([
      { status: 503, headers: { 'retry-after': 'Tue, 24 Nov 2026 12:00:03 GMT' }, body: 'busy' },
      OK,
    ]);
    await client({ now: () => now }).getQuota();
    assert.deepEqual(waits, [3000]);
  });

  test('behavior: without a hint the waits grow exponentially, with jitter, up to maxDelayMs', async () => {
    const { waits, client } = await scripted([{ status: 503, body: 'busy' }]);
    let draw = 0;
    const draws = [0, 0.999999, 0.5, 0, 0];
    await assert.rejects(() =>
      client({
        retry: { maxAttempts: 6, baseDelayMs: 100, maxDelayMs: 1000 },
        random: () => draws[draw++]!,
      }).listMarkets(),
    );
    // Between half and all of min(1000, 100 * 2^n).
    assert.equal(waits.length, 5);
    assert.deepEqual(
      waits.map((w) => Math.round(w)),
      [50, 200, 300, 400, 500],
    );
  });

  test('error: the retry bound: gives up after maxAttempts with the last error', async () => {
    let n = 0;
    const { seen, waits, client } = await scripted(() => ({
      status: 429,
      headers: { 'retry-after': '1' },
      body: refusal('RATE_LIMIT_EXCEEDED', { retryAfter: 0.125 * ++n }),
    }));
    await assert.rejects(
      () => client({ retry: { maxAttempts: 3 } }).positionsAtRisk(),
      (err: unknown) => {
        assert.ok(isApiError(err, 'RATE_LIMIT_EXCEEDED'));
        assert.equal(err.attempts, 3);
        assert.equal(err.status, 429);
        assert.equal(err.retryAfterMs, 375); // the third answer's
        assert.equal(err.requestId, 'req-3');
        return true;
      },
    );
    assert.equal(seen.length, 3);
    assert.equal(waits.length, 2);
  });

  test('error: a wait longer than maxDelayMs is not waited: the error is thrown at once', async () => {
    const { seen, waits, client } = await scripted([
      {
        status: 429,
        headers: { 'retry-after': '36000' },
        body: refusal('DAILY_QUOTA_EXCEEDED', { limit: 1000, used: 1001 }),
      },
    ]);
    await assert.rejects(
      () => client().listMarkets(),
      (err: unknown) =>
        isApiError(err, 'DAILY_QUOTA_EXCEEDED') && err.body.used === 1001 && err.attempts === 1,
    );
    assert.equal(seen.length, 1);
    assert.deepEqual(waits, []);
  });

  test('behavior: other errors are not retried; retry: false retries nothing', async () => {
    const bad = await scripted([{ status: 500, body: refusal('INTERNAL_ERROR') }]);
    await assert.rejects(
      () => bad.client().getProfile(),
      (err: unknown) => isApiError(err, 'INTERNAL_ERROR'),
    );
    assert.equal(bad.seen.length, 1);
    const limited = await scripted([
      { status: 429, body: refusal('RATE_LIMIT_EXCEEDED', { retryAfter: 0 }) },
    ]);
    await assert.rejects(() => limited.client({ retry: false }).getQuota());
    assert.equal(limited.seen.length, 1);
  });

  test('behavior: the default sleep really waits (a few ms), and an abort stops the wait', async () => {
    const { seen, client } = await scripted([
      { status: 429, body: refusal('RATE_LIMIT_EXCEEDED', { retryAfter: 0.003 }) },
      OK,
    ]);
    const real = client({ sleep: undefined, retry: { baseDelayMs: 1 } });
    const started = performance.now();
    await real.listMarkets();
    assert.ok(performance.now() - started >= 3);
    assert.equal(seen.length, 2);

    const slow = await scripted([{ status: 503, body: refusal('SERVICE_UNAVAILABLE', { retryAfter: 20 }) }]);
    const controller = new AbortController();
    const pending = slow.client({ sleep: undefined }).listMarkets({}, { signal: controller.signal });
    // Abort once the first answer has arrived, while the client waits 20 s before retrying (a
    // fixed 5 ms timer could fire before the server saw the request on a loaded machine).
    while (slow.seen.length === 0) await new Promise((resolve) => setTimeout(resolve, 1));
    setTimeout(() => controller.abort(new Error('stop')), 5);
    await assert.rejects(pending, /stop/);
    assert.equal(slow.seen.length, 1);
  });
});

describe('answers and requests', () => {
  test("error: an answer that is not the API's error shape is an LrdsResponseError", async () => {
    const { client } = await scripted([{ status: 502, body: '<html>bad gateway</html>' }]);
    await assert.rejects(
      () => client().listMarkets(),
      (err: unknown) =>
        err instanceof LrdsResponseError && err.status === 502 && err.bodyText.includes('bad gateway'),
    );
  });

  test('behavior: path parameters are encoded, undefined query parameters left out, bodies sent as JSON', async () => {
    const { seen, client } = await scripted([{ status: 201, body: { data: { id: 'k1' }, meta: {} } }]);
    const c = client({ headers: { 'x-request-id': 'mine' } });
    await c.getMarket('morpho-1-0xab/c?d');
    await c.positionsAtRisk({ healthFactorThreshold: 1.05, chainIds: '1,8453', marketId: undefined });
    await c.createApiKey({ name: 'bot' });
    assert.equal(seen[0]!.url.pathname, '/api/v1/markets/morpho-1-0xab%2Fc%3Fd');
    assert.equal(seen[1]!.url.search, '?healthFactorThreshold=1.05&chainIds=1%2C8453');
    assert.equal(seen[2]!.method, 'POST');
    assert.equal(seen[2]!.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(seen[2]!.body), { name: 'bot' });
    assert.ok(seen.every((s) => s.headers['x-request-id'] === 'mine'));
  });
});

describe('paging by cursor (docs/decisions.md "Lists, pages and streams")', () => {
  const ALL = Array.from({ length: 11 }, (_, i) => ({ uniqueKey: `morpho-1-0x${i}` }));

  /** Pages of ALL by an opaque cursor (the index, base64), `meta.nextCursor` absent on the last. */
  function cursorServer(seen: Seen) {
    const limit = Number(seen.url.searchParams.get('limit') ?? 50);
    const cursor = seen.url.searchParams.get('cursor');
    const from = cursor === null ? 0 : Number(Buffer.from(cursor, 'base64url').toString());
    const data = ALL.slice(from, from + limit);
    const next =
      from + limit < ALL.length ? Buffer.from(String(from + limit)).toString('base64url') : undefined;
    const meta = { latencyMs: 1, freshness: 'live', source: 'morpho', total: ALL.length, nextCursor: next };
    return { status: 200, body: { data, meta } };
  }

  test('behavior: follows meta.nextCursor with the same parameters until it is absent', async () => {
    const { seen, client } = await scripted(cursorServer);
    const keys: string[] = [];
    for await (const m of client().paginate('searchMarkets', { query: 'weth', limit: 4 }))
      keys.push(m.uniqueKey);
    assert.deepEqual(
      keys,
      ALL.map((m) => m.uniqueKey),
    );
    assert.equal(seen.length, 3);
    assert.deepEqual(
      seen.map((s) => [s.url.searchParams.get('query'), s.url.searchParams.get('limit')]),
      [
        ['weth', '4'],
        ['weth', '4'],
        ['weth', '4'],
      ],
    );
    assert.equal(seen[0]!.url.searchParams.get('cursor'), null);
  });

  test('behavior: on GET /markets a cursor is preferred to the offset', async () => {
    const { seen, client } = await scripted(cursorServer);
    let n = 0;
    for await (const _ of client().paginate('listMarkets', { limit: 5, offset: 0 })) n++;
    assert.equal(n, ALL.length);
    assert.equal(seen[1]!.url.searchParams.get('offset'), null);
    assert.ok(seen[1]!.url.searchParams.get('cursor'));
  });

  test('behavior: breaking out of the loop stops asking for pages', async () => {
    const { seen, client } = await scripted(cursorServer);
    for await (const m of client().paginate('searchMarkets', { query: 'weth', limit: 2 })) {
      if (m.uniqueKey === 'morpho-1-0x2') break;
    }
    assert.equal(seen.length, 2);
  });

  test('error: a cursor sent twice ends the iteration with an error instead of looping', async () => {
    const { client } = await scripted([{ status: 200, body: { data: [{}], meta: { nextCursor: 'same' } } }]);
    await assert.rejects(async () => {
      for await (const _ of client().pages('positionsAtRisk', {})) {
        // drain
      }
    }, /cursor same twice/);
  });
});
