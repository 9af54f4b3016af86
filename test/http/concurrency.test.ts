import assert from 'node:assert/strict';
import { Agent, request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, test } from 'node:test';
import { utcDay } from '../../src/domain/periods.ts';
import { createTestApp, type TestApp, tiersWith } from '../helpers.ts';

/** Fires `n` GETs at once over real sockets (64 connections) and returns their status codes. */
async function burst(t: TestApp, path: string, key: string, n: number): Promise<number[]> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = t.app.server.address() as AddressInfo;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, path, agent, headers: { authorization: `Bearer ${key}` } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        },
      );
      req.on('error', reject);
      req.end();
    });
  try {
    return await Promise.all(Array.from({ length: n }, one));
  } finally {
    agent.destroy();
  }
}

const count = (codes: number[], code: number) => codes.filter((c) => c === code).length;

describe('concurrency over real sockets (one key, 500 requests at once)', () => {
  test('behavior: exactly the rate is admitted', async () => {
    // The test clock does not move: every request falls in the same 1,000 ms window.
    const t = await createTestApp();
    const key = await t.key('pro');
    const codes = await burst(t, '/api/v1/markets/search?query=weth', key, 500);
    assert.equal(count(codes, 200), 20);
    assert.equal(count(codes, 429), 480);
    await t.close();
  });

  test('behavior: exactly the quota is admitted and every admitted request is counted once', async () => {
    const tiers = tiersWith((tt) => {
      tt.pro!.ratePerSecond = 100_000;
      tt.pro!.dailyQuota = 100;
    });
    const t = await createTestApp({ tiers });
    const key = await t.key('pro');
    const codes = await burst(t, '/api/v1/markets/search?query=weth', key, 500);
    assert.equal(count(codes, 200), 100);
    assert.equal(count(codes, 429), 400);
    const keyId = (await t.store.listKeys())[0]!.id;
    // every request passed the limiter, so every one was counted toward the day
    assert.deepEqual(await t.store.usageTotals(keyId, utcDay(t.clock.now())), {
      dayUsed: 500,
      monthUsed: 100,
    });
    await t.close();
  });
});
