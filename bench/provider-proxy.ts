/**
 * A stand-in RPC provider for the benches: a JSON-RPC proxy in front of a local chain that
 * imposes what the common providers impose. `eth_getLogs` over more than `maxLogBlocks` blocks,
 * or answering more than `maxLogResults` logs, is refused with the providers' usual error
 * (-32005, "query returned more than 10000 results"); more than `requestsPerSecond` HTTP requests
 * in a second get 429 with Retry-After: 1; every answer waits 50 to 150 ms; and one request in
 * `throttleOneIn` gets a 429 anyway. It counts the HTTP requests and the calls they carry.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ProviderLimitsOptions {
  maxLogBlocks: number;
  maxLogResults: number;
  requestsPerSecond: number;
  minLatencyMs: number;
  maxLatencyMs: number;
  /** One request in this many is answered 429 whatever the rate (0: none). */
  throttleOneIn: number;
}

export const PROVIDER_LIMITS: ProviderLimitsOptions = {
  maxLogBlocks: 10_000,
  maxLogResults: 10_000,
  requestsPerSecond: 25,
  minLatencyMs: 50,
  maxLatencyMs: 150,
  throttleOneIn: 200,
};

export interface ProviderProxy {
  url: string;
  /** HTTP requests answered (429s included), calls carried, 429s, getLogs refused. */
  counts: { requests: number; calls: number; throttled: number; logsRefused: number };
  close(): Promise<void>;
}

type Call = { jsonrpc: '2.0'; id: unknown; method: string; params?: unknown[] };

export async function providerProxy(
  target: string,
  limits: ProviderLimitsOptions = PROVIDER_LIMITS,
): Promise<ProviderProxy> {
  const counts = { requests: 0, calls: 0, throttled: 0, logsRefused: 0 };
  // The start of each of the last second's requests (the sliding second the rate is checked on).
  const recent: number[] = [];
  // A deterministic "random": the same run, the same latencies and 429s.
  let seed = 0x2545f491;
  const random = () => {
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) / 2 ** 32;
  };
  const forward = async (body: unknown) =>
    (await (
      await fetch(target, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    ).json()) as unknown;
  const refused = (c: Call, message: string) => ({
    jsonrpc: '2.0',
    id: c.id,
    error: { code: -32005, message },
  });
  const answer = async (c: Call): Promise<unknown> => {
    if (c.method !== 'eth_getLogs') return forward(c);
    const filter = (c.params?.[0] ?? {}) as { fromBlock?: string; toBlock?: string };
    if (filter.fromBlock?.startsWith('0x') && filter.toBlock?.startsWith('0x')) {
      const blocks = Number(BigInt(filter.toBlock) - BigInt(filter.fromBlock)) + 1;
      if (blocks > limits.maxLogBlocks) {
        counts.logsRefused++;
        return refused(c, `block range is too wide: at most ${limits.maxLogBlocks} blocks`);
      }
    }
    const out = (await forward(c)) as { result?: unknown[] };
    if (Array.isArray(out.result) && out.result.length > limits.maxLogResults) {
      counts.logsRefused++;
      return refused(c, `query returned more than ${limits.maxLogResults} results`);
    }
    return out;
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      counts.requests++;
      const now = performance.now();
      while (recent.length > 0 && recent[0]! <= now - 1000) recent.shift();
      const over = recent.length >= limits.requestsPerSecond;
      recent.push(now);
      const delay = limits.minLatencyMs + random() * (limits.maxLatencyMs - limits.minLatencyMs);
      await new Promise((r) => setTimeout(r, delay));
      if (over || (limits.throttleOneIn > 0 && random() * limits.throttleOneIn < 1)) {
        counts.throttled++;
        res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('rate limited');
        return;
      }
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Call | Call[];
        const calls = Array.isArray(body) ? body : [body];
        counts.calls += calls.length;
        const out = Array.isArray(body) ? await Promise.all(calls.map(answer)) : await answer(body);
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(out));
      } catch (err) {
        res.writeHead(502, { 'content-type': 'text/plain' }).end(String(err));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
