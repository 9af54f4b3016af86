import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, test } from 'node:test';
import { createPublicClient, type PublicClient } from 'viem';
import {
  DEFAULT_PROVIDER_LIMITS,
  limitedHttp,
  type ProviderLimits,
  providerTransport,
  RequestBudget,
  retryAfterMs,
} from '../../src/ingest/chain/transport.ts';

/**
 * A stand-in JSON-RPC provider on localhost with a provider's limits: batches of at most
 * `maxBatch` calls, bodies of at most `maxBody` bytes (refused like anvil: a JSON-RPC error for
 * the whole batch), answers of `answerBytes` bytes per call, and 429s on demand.
 */
interface Provider {
  url: string;
  server: Server;
  batches: number[];
  bodies: number[];
  /** Answer the next N requests with 429 and this Retry-After. */
  throttle(n: number, retryAfter: string): void;
  close(): Promise<void>;
}

async function provider(
  opts: { maxBatch?: number; maxBody?: number; answerBytes?: number } = {},
): Promise<Provider> {
  const batches: number[] = [];
  const bodies: number[] = [];
  let throttled = 0;
  let retryAfter = '1';
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      bodies.push(text.length);
      if (throttled > 0) {
        throttled--;
        res.writeHead(429, { 'retry-after': retryAfter, 'content-type': 'text/plain' }).end('slow down');
        return;
      }
      if (opts.maxBody !== undefined && text.length > opts.maxBody) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32600, message: 'JSON is not a valid request object' },
          }),
        );
        return;
      }
      const body = JSON.parse(text);
      const calls = Array.isArray(body) ? body : [body];
      batches.push(calls.length);
      if (opts.maxBatch !== undefined && calls.length > opts.maxBatch) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: null,
            error: { code: -32600, message: 'batch size too large' },
          }),
        );
        return;
      }
      const answer = (c: { id: number; method: string; params?: unknown[] }) =>
        c.method === 'eth_chainId'
          ? { jsonrpc: '2.0', id: c.id, result: '0x1' }
          : c.method === 'eth_getLogs'
            ? { jsonrpc: '2.0', id: c.id, result: [] }
            : c.method === 'eth_getBalance'
              ? {
                  jsonrpc: '2.0',
                  id: c.id,
                  result: `0x${'0'.repeat(opts.answerBytes ?? 1)}${String(c.params?.[0] ?? '').slice(-4)}`,
                }
              : { jsonrpc: '2.0', id: c.id, error: { code: -32601, message: 'method not found' } };
      const out = Array.isArray(body) ? calls.map(answer) : answer(body);
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    server,
    batches,
    bodies,
    throttle(n, after) {
      throttled = n;
      retryAfter = after;
    },
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

const servers: Provider[] = [];
after(() => Promise.all(servers.map((s) => s.close())));

const addr = (i: number) => `0x${i.toString(16).padStart(40, '0')}` as const;

function clientOf(urls: string[], limits: Partial<ProviderLimits>, hooks = {}): PublicClient {
  const transport = providerTransport(urls, { ...DEFAULT_PROVIDER_LIMITS, retries: 2, ...limits }, hooks);
  return createPublicClient({ transport }) as PublicClient;
}

describe('JSON-RPC within provider limits', () => {
  test('behavior: requests made together go in batches no larger than the count limit', async () => {
    const p = await provider({ maxBatch: 10 });
    servers.push(p);
    const client = clientOf([p.url], { batchCalls: 10 });
    const balances = await Promise.all(
      Array.from({ length: 95 }, (_, i) => client.getBalance({ address: addr(i + 1) })),
    );
    assert.equal(balances.length, 95);
    assert.equal(balances[94], BigInt(`0x${addr(95).slice(-4)}`));
    assert.ok(Math.max(...p.batches) <= 10, `largest batch ${Math.max(...p.batches)}`);
    assert.equal(
      p.batches.reduce((a, b) => a + b, 0),
      95,
    );
  });

  test('behavior: an eth_getLogs goes alone, never in a batch', async () => {
    const p = await provider();
    servers.push(p);
    const client = clientOf([p.url], { batchCalls: 50 });
    const logs = (i: number) =>
      client.request({
        method: 'eth_getLogs',
        params: [{ address: addr(i), fromBlock: '0x1', toBlock: '0x2' }],
      });
    await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => logs(i + 1)),
      ...Array.from({ length: 5 }, (_, i) => client.getBalance({ address: addr(i + 1) })),
    ]);
    // The five balances in one batch, each log read alone.
    assert.deepEqual(
      p.batches.filter((n) => n > 1),
      [5],
    );
    assert.equal(p.batches.filter((n) => n === 1).length, 5);
  });

  test('behavior: no request body exceeds the byte limit', async () => {
    const p = await provider();
    servers.push(p);
    const client = clientOf([p.url], { batchCalls: 1000, batchBytes: 2_000 });
    await Promise.all(Array.from({ length: 60 }, (_, i) => client.getBalance({ address: addr(i + 1) })));
    assert.ok(Math.max(...p.bodies) <= 2_000, `largest body ${Math.max(...p.bodies)}`);
  });

  test('behavior: a batch the provider refuses as too large is asked again in halves', async () => {
    // The provider takes bodies of 1,500 bytes; the transport believes it may send 100,000.
    const p = await provider({ maxBody: 1_500 });
    servers.push(p);
    const client = clientOf([p.url], { batchCalls: 1000, batchBytes: 100_000 });
    const out = await Promise.all(
      Array.from({ length: 40 }, (_, i) => client.getBalance({ address: addr(i + 1) })),
    );
    assert.equal(out.length, 40);
    assert.ok(p.batches.every((n) => n <= 40));
  });

  test('behavior: an answer over the size limit splits the batch; alone it fails naming the limit', async () => {
    const p = await provider({ answerBytes: 400 });
    servers.push(p);
    const client = clientOf([p.url], { batchCalls: 1000, responseBytes: 2_000, retries: 0 });
    const out = await Promise.all(
      Array.from({ length: 8 }, (_, i) => client.getBalance({ address: addr(i + 1) })),
    );
    assert.equal(out.length, 8);
    // Eight answers are over 2,000 bytes, four are not: asked once whole, then in halves.
    assert.deepEqual(p.batches, [8, 4, 4]);
    const tiny = clientOf([p.url], { responseBytes: 100, retries: 0 });
    await assert.rejects(tiny.getBalance({ address: addr(1) }), /response size exceeded 100 bytes/);
  });

  test('behavior: a 429 is retried after its Retry-After, and holds back the other requests', async () => {
    const p = await provider();
    servers.push(p);
    p.throttle(1, '0.05');
    const client = clientOf([p.url], { retries: 3 });
    const started = performance.now();
    assert.equal(await client.getChainId(), 1);
    // viem waited the provider's 50 ms (not its own backoff of 500 ms and up).
    assert.ok(performance.now() - started >= 45);
  });

  test('behavior: the request budget spaces requests evenly (injected clock)', async () => {
    let now = 0;
    const waits: number[] = [];
    const budget = new RequestBudget(
      4,
      () => now,
      async (ms) => {
        waits.push(ms);
        now += ms;
      },
    );
    for (let i = 0; i < 9; i++) await budget.take();
    // 9 requests at 4 a second: the ninth starts 2 s after the first.
    assert.equal(now, 2000);
    assert.deepEqual(waits, [250, 250, 250, 250, 250, 250, 250, 250]);
    budget.pause(1000);
    await budget.take();
    assert.equal(now, 3000);
  });

  test('behavior: a pause asked for while a request waits for the budget holds that request too', async () => {
    let now = 0;
    let paused = false;
    const budget: RequestBudget = new RequestBudget(
      4,
      () => now,
      async (ms) => {
        now += ms;
        // A 429 with Retry-After arrives while this request waits its turn.
        if (!paused) {
          paused = true;
          budget.pause(5000);
        }
      },
    );
    await budget.take(); // at 0
    await budget.take(); // its turn at 250, then the pause asked for at 250: it starts at 5,250
    assert.equal(now, 5250);
  });

  test('behavior: a Retry-After longer than a minute fails the request (a fallback URL is tried)', async () => {
    const p = await provider();
    servers.push(p);
    p.throttle(1, '3600');
    const slow = clientOf([p.url], { retries: 3 });
    await assert.rejects(slow.getChainId(), /asks to wait 3600 s/);
    const q = await provider();
    servers.push(q);
    q.throttle(1, '3600');
    const p2 = await provider();
    servers.push(p2);
    assert.equal(await clientOf([q.url, p2.url], { retries: 3 }).getChainId(), 1);
  });

  test('behavior: with several URLs, one that cannot be reached is passed over', async () => {
    const p = await provider();
    servers.push(p);
    const down = await provider();
    await down.close();
    const client = clientOf([down.url, p.url], { retries: 0 });
    assert.equal(await client.getChainId(), 1);
  });

  test('behavior: a provider that never answers times out', async () => {
    const silent = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const client = createPublicClient({
        transport: limitedHttp(url, { ...DEFAULT_PROVIDER_LIMITS, timeoutMs: 200, retries: 0 }),
      });
      await assert.rejects(client.getChainId(), /took too long|timed out/i);
    } finally {
      silent.closeAllConnections();
      await new Promise<void>((r) => silent.close(() => r()));
    }
  });

  test('default: Retry-After in seconds or as a date', () => {
    assert.equal(retryAfterMs('2', 0), 2000);
    assert.equal(retryAfterMs('0.5', 0), 500);
    assert.equal(retryAfterMs(new Date(10_000).toUTCString(), 4_000), 6_000);
    assert.equal(retryAfterMs('soon', 0), null);
    assert.equal(retryAfterMs(null, 0), null);
  });
});
