import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { FastifyInstance, FastifyRequest, LightMyRequestResponse } from 'fastify';
import type { KeyService } from '../../src/access/keys.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import {
  createTestApp,
  GENEROUS_TIERS,
  makeMarket,
  makePosition,
  modelOf,
  type TestApp,
  tempDir,
} from '../helpers.ts';

/**
 * Security beyond the shared suite (security.test.ts): keys never stored or logged, 401s that
 * reveal nothing, no tier escalation through path tricks, test keys never served live data,
 * the CORS policy and the security headers.
 */

// ---- keys are never stored or logged ---------------------------------------------------------

/** Collects log lines. */
class LogSink extends Writable {
  lines: string[] = [];
  override _write(chunk: Buffer, _enc: string, done: () => void): void {
    this.lines.push(...chunk.toString().split('\n').filter(Boolean));
    done();
  }
}

interface FileApp {
  app: FastifyInstance;
  store: SqliteStore;
  keys: KeyService;
  dir: string;
}

async function fileApp(logger: Record<string, unknown>): Promise<FileApp> {
  const dir = tempDir('lrds-sec-');
  const store = new SqliteStore(join(dir, 'lrds.db'));
  const t = await createTestApp({ store, tiers: GENEROUS_TIERS, logger, server: { pressure: false } });
  return { app: t.app, store, keys: t.keys, dir };
}

/** Every byte of the database files (main, WAL, shared memory). */
function databaseBytes(dir: string): Buffer {
  return Buffer.concat(
    readdirSync(dir)
      .filter((f) => f.startsWith('lrds.db'))
      .map((f) => readFileSync(join(dir, f))),
  );
}

describe('raw keys are never stored or logged', () => {
  for (const [name, logger, headersLogged] of [
    ['production logging (info)', { level: 'info' }, false],
    [
      'trace logging with request headers',
      {
        level: 'trace',
        serializers: {
          req: (req: FastifyRequest) => ({ method: req.method, headers: req.headers }),
        },
      },
      true,
    ],
  ] as const) {
    test(`behavior: ${name}: neither the key nor its random part is in the database files or the log`, async () => {
      const sink = new LogSink();
      const f = await fileApp({ ...logger, stream: sink });
      try {
        const account = await f.keys.ensureAccount('acme');
        const { key } = await f.keys.create({ accountId: account.id, tier: 'pro', mode: 'live' });
        const unknown = `lrds_live_${'Z'.repeat(31)}9`;
        const secrets = [key, key.slice(10), unknown, unknown.slice(10)];

        const inject = (url: string, authorization: string, method: 'GET' | 'POST' | 'DELETE' = 'GET') =>
          f.app.inject({
            method,
            url,
            headers: {
              authorization,
              ...(method === 'POST' ? { 'content-type': 'application/json' } : {}),
            },
            ...(method === 'POST' ? { payload: '{"name":"ci"}' } : {}),
          });
        for (const auth of [
          `Bearer ${key}`,
          `bearer ${key}`,
          `Bearer ${unknown}`,
          `Basic ${key}`,
          `Bearer ${key}x`,
        ]) {
          await inject('/api/v1/markets', auth);
          await inject('/api/v1/client/quota', auth);
          await inject('/api/v1/nope', auth);
        }
        // keys sent by mistake in the URL (the 400 or 404 is right; the log must still not keep them)
        await inject(`/api/v1/markets?api_key=${key}`, `Bearer ${key}`);
        await inject(`/api/v1/client/api-keys/${key}`, `Bearer ${key}`, 'DELETE');
        await inject(`/api/v1/${unknown}`, 'none');
        // …however they are percent-encoded: an escaped underscore or letter, twice-encoded, or every character
        const random = key.slice(10);
        const hexAll = (t: string) => [...t].map((c) => `%${c.charCodeAt(0).toString(16)}`).join('');
        for (const spelled of [
          `lrds%5Flive%5F${random}`,
          `%6Crds_live_${random}`,
          `%256Crds%255Flive_${random}`,
          `%2525256Crds_live_${random}`, // four times
          `%${'25'.repeat(40)}6Crds_live_${random}`, // forty times
          `LRDS_LIVE_${random}`,
          hexAll(key),
        ]) {
          await inject(`/api/v1/markets?api_key=${spelled}`, `Bearer ${key}`);
          await inject(`/api/v1/${spelled}`, 'none');
        }
        // …or sent as the Host header, or in a header of its own
        for (const host of [key, `%256C${key.slice(1)}`]) {
          await f.app.inject({ url: '/api/v1/markets', headers: { host, authorization: `Bearer ${key}` } });
        }
        await f.app.inject({
          url: '/api/v1/markets',
          headers: { authorization: 'Bearer none', 'x-api-key': key },
        });
        // a key created over the API is shown once in the response, and stored nowhere
        const created = await inject('/api/v1/client/api-keys', `Bearer ${key}`, 'POST');
        assert.equal(created.statusCode, 201);
        const newKey: string = created.json().data.key;
        secrets.push(newKey, newKey.slice(10));
        await inject('/api/v1/markets', `Bearer ${newKey}`);
        await f.app.close();
        await f.store.close();

        const log = sink.lines.join('\n');
        assert.ok(sink.lines.length > 20, 'the logger wrote the requests');
        // Decoded to a fixed point, as a reader of the log could.
        let decodedLog = log;
        for (let previous = ''; previous !== decodedLog; ) {
          previous = decodedLog;
          decodedLog = decodedLog.replace(/%([0-7][0-9a-f])/gi, (_, h) =>
            String.fromCharCode(Number.parseInt(h, 16)),
          );
        }
        for (const s of secrets)
          assert.ok(!decodedLog.includes(s), `${s.slice(0, 14)}… in the log, percent-encoded`);
        const db = databaseBytes(f.dir);
        assert.ok(db.length > 0);
        for (const s of secrets) {
          assert.ok(!log.includes(s), `${s.slice(0, 14)}… in the log`);
          assert.ok(!db.includes(s), `${s.slice(0, 14)}… in the database files`);
          assert.ok(!db.includes(Buffer.from(s, 'utf16le')), `${s.slice(0, 14)}… (UTF-16) in the database`);
        }
        if (headersLogged) {
          const withHeaders = sink.lines.map((l) => JSON.parse(l)).filter((l) => l.req?.headers);
          assert.ok(withHeaders.length > 0);
          for (const l of withHeaders) assert.equal(l.req.headers.authorization, '[redacted]');
        } else {
          assert.match(log, /lrds_live_\[redacted\]/, 'a key in the URL is masked');
        }
      } finally {
        rmSync(f.dir, { recursive: true, force: true });
      }
    });
  }
});

// ---- 401s reveal nothing -------------------------------------------------------------------------

describe('401 never reveals whether a key exists', () => {
  test('error: unknown, revoked, malformed, missing and wrong-scheme keys get byte-identical answers', async () => {
    const t = await createTestApp({ tiers: GENEROUS_TIERS });
    try {
      const revoked = await t.key('pro');
      const id = (await t.get('/api/v1/client/profile', revoked)).json().data.key.id;
      await t.keys.revoke(id);
      const revokedTest = await t.key('pro', 'test');
      const idTest = (await t.get('/api/v1/client/profile', revokedTest)).json().data.key.id;
      await t.keys.revoke(idTest);
      const unknown = `lrds_live_${'A'.repeat(32)}`;
      const variants: Record<string, string | undefined> = {
        unknown: `Bearer ${unknown}`,
        unknownTest: `Bearer lrds_test_${'A'.repeat(32)}`,
        revoked: `Bearer ${revoked}`,
        revokedTest: `Bearer ${revokedTest}`,
        malformed: 'Bearer not-a-key',
        truncated: `Bearer ${revoked.slice(0, -1)}`,
        missing: undefined,
        scheme: `Basic ${revoked}`,
      };
      const strip = (res: LightMyRequestResponse) => {
        const { 'x-request-id': _id, date: _date, ...headers } = res.headers;
        return { status: res.statusCode, headers, body: res.body };
      };
      for (const url of ['/api/v1/markets', '/api/v1/risk/positions-at-risk', '/api/v1/client/quota']) {
        const answers = new Map<string, ReturnType<typeof strip>>();
        for (const [name, authorization] of Object.entries(variants)) {
          answers.set(name, strip(await t.get(url, undefined, authorization ? { authorization } : {})));
        }
        const reference = answers.get('unknown')!;
        assert.equal(reference.status, 401);
        for (const [name, a] of answers)
          assert.deepEqual(a, reference, `${url}: ${name} differs from unknown`);
      }
    } finally {
      await t.close();
    }
  });
});

// ---- tier escalation through path tricks -----------------------------------------------------------

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request over a raw socket: the path reaches the server exactly as written. */
function rawRequest(port: number, target: string, key: string, method = 'GET'): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const socket = net.connect(port, '127.0.0.1', () =>
      socket.write(
        `${method} ${target} HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nConnection: close\r\n\r\n`,
      ),
    );
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = text.slice(0, split).split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: text.slice(split + 4) });
    });
  });
}

const RISK_TRICKS = [
  '/api/v1/risk/positions-at-risk',
  '//api/v1/risk/positions-at-risk',
  '/api/v1//risk/positions-at-risk',
  '/api/v1/risk//positions-at-risk',
  '/api//v1/risk/positions-at-risk',
  '/api/v1/risk/../risk/positions-at-risk',
  '/api/v1/markets/../risk/positions-at-risk',
  '/api/v1/./risk/positions-at-risk',
  '/api/v1/markets/%2e%2e/risk/positions-at-risk',
  '/api/v1/markets/..%2Frisk%2Fpositions-at-risk',
  '/api/v1/%72isk/positions-at-risk',
  '/api/v1/risk/%70ositions-at-risk',
  '/%61pi/v1/risk/positions-at-risk',
  '/api/v1/risk%2Fpositions-at-risk',
  '/api/v1/risk%2fpositions-at-risk',
  '/api/v1%2Frisk%2Fpositions-at-risk',
  '/API/V1/RISK/POSITIONS-AT-RISK',
  '/api/v1/Risk/positions-at-risk',
  '/api/v1/risk/positions-at-risk/',
  '/api/v1/risk/positions-at-risk//',
  '/api/v1/risk/positions-at-risk/.',
  '/api/v1/risk/positions-at-risk;',
  '/api/v1/risk/positions-at-risk;x=1',
  '/api/v1/risk;/positions-at-risk',
  '/api/v1/risk/positions-at-risk%3B',
  '/api/v1/risk/positions-at-risk?',
  '/api/v1/risk/positions-at-risk??limit=1',
  '/api/v1/risk/positions-at-risk?limit=1&limit=2',
  '/api/v1/risk/positions-at-risk%3Flimit=1',
  '/api/v1/risk/positions-at-risk%23',
  '/api/v1/risk/positions-at-risk#frag',
  '/api/v1/risk/positions-at-risk%00',
  '/api/v1/risk/positions-at-risk%20',
  '/api/v1/risk/positions-at-risk.json',
  '/api/v1/markets?/../risk/positions-at-risk',
  '/api/v1/markets;/../risk/positions-at-risk',
  '/api/v1/markets/search?query=x/../../risk/positions-at-risk',
  '/api/v2/risk/positions-at-risk',
  '/api/v1/client/../risk/positions-at-risk',
  'http://localhost/api/v1/risk/positions-at-risk',
  'http://evil.example/api/v1/risk/positions-at-risk',
];

describe('no tier escalation through path tricks', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await createTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  after(() => t.close());

  const used = async (key: string) => {
    const res = await t.get('/api/v1/client/quota', key);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().data.daily.used as number;
  };

  for (const method of ['GET', 'HEAD']) {
    test(`error: a Free key never gets risk data, and every request that reaches a route is counted (${method})`, async (ctx) => {
      const key = await t.key('free');
      const outcomes: Record<string, string[]> = {};
      for (const target of RISK_TRICKS) {
        t.clock.advance(1000); // a fresh rate window: 2 quota reads and the trick fit in the Free rate
        const before = await used(key);
        const res = await rawRequest(port, target, key, method);
        const after = await used(key);
        const what = `${method} ${target} -> ${res.status} ${res.body.slice(0, 200)}`;
        const routed = res.headers['x-ratelimit-limit'] !== undefined;
        const outcome = `${res.status}${routed ? ' counted' : ''}`;
        outcomes[outcome] = [...(outcomes[outcome] ?? []), target];
        assert.ok(!/healthFactor/.test(res.body), `risk data: ${what}`);
        if (res.headers['x-ratelimit-limit'] !== undefined) {
          // reached a route through the access pipeline: counted. The risk route refuses the tier
          // (403); a trick that lands on a core route gets that route's answer, never risk data.
          assert.equal(after, before + 1, `not counted: ${what}`);
          assert.ok([200, 400, 403, 404].includes(res.status), what);
          if (method === 'GET' && res.status === 403)
            assert.equal(JSON.parse(res.body).error, 'TIER_FORBIDDEN');
        } else {
          // reached no route (404, or 400 for a malformed path): nothing served, nothing counted
          assert.equal(after, before, what);
          assert.ok([400, 404].includes(res.status), what);
        }
      }
      for (const [outcome, targets] of Object.entries(outcomes))
        ctx.diagnostic(`${outcome}: ${targets.join('  ')}`);
    });
  }

  test('behavior: override headers do not reroute a request', async () => {
    const key = await t.key('free');
    for (const header of ['X-Original-URL', 'X-Rewrite-URL', 'X-HTTP-Method-Override', 'X-Forwarded-Path']) {
      t.clock.advance(1000);
      const res = await t.get('/api/v1/markets', key, { [header]: '/api/v1/risk/positions-at-risk' });
      assert.equal(res.statusCode, 200, header);
      assert.ok(!/healthFactor/.test(res.body), header);
    }
  });
});

// ---- test keys never see live data ------------------------------------------------------------------

describe('test keys never see live data', () => {
  const clock = new ManualClock();
  const liveEth = makeMarket({ chainId: 1 });
  const liveBase = makeMarket({ chainId: 8453, protocol: 'aave' });
  const sandEth = makeMarket({ chainId: 1 });
  const sandBase = makeMarket({ chainId: 8453, protocol: 'aave' });
  const live = modelOf(
    [liveEth, liveBase],
    [makePosition(liveEth), makePosition(liveBase, { collateralUsd: 9000 })],
    clock,
  );
  const sandbox = modelOf(
    [sandEth, sandBase],
    [makePosition(sandEth), makePosition(sandBase, { collateralUsd: 9000 })],
    clock,
  );
  const liveKeys = new Set([liveEth.uniqueKey, liveBase.uniqueKey]);
  const sandKeys = new Set([sandEth.uniqueKey, sandBase.uniqueKey]);
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ clock, live, sandbox, tiers: GENEROUS_TIERS });
  });
  after(() => t.close());

  /** Every market uniqueKey anywhere in the data of a 200 (a 404 echoes the id asked for). */
  const marketKeysIn = (res: LightMyRequestResponse) => {
    if (res.statusCode !== 200) {
      assert.equal(res.json().error, 'MARKET_NOT_FOUND', res.body);
      return new Set<string>();
    }
    return new Set(JSON.stringify(res.json().data).match(/(morpho|aave)-\d+-0x[0-9a-f]{64}/g) ?? []);
  };

  const urls = (own: string, other: string) => [
    '/api/v1/markets',
    '/api/v1/markets?limit=500',
    '/api/v1/markets?chainIds=1,8453',
    '/api/v1/markets?protocol=aave',
    '/api/v1/markets/search?query=weth',
    '/api/v1/markets/search?query=wsteth%20weth&chainIds=1,8453',
    `/api/v1/markets/${own}`,
    `/api/v1/markets/${own.toUpperCase()}`,
    `/api/v1/markets/${other}`,
    '/api/v1/risk/positions-at-risk?healthFactorThreshold=10',
    '/api/v1/risk/positions-at-risk?healthFactorThreshold=10&chainIds=1,8453&limit=500',
    `/api/v1/risk/positions-at-risk?healthFactorThreshold=10&marketId=${other}`,
    `/api/v1/risk/positions-at-risk?healthFactorThreshold=10&marketId=${own}`,
  ];

  for (const tier of ['pro', 'enterprise'] as const) {
    test(`behavior: a ${tier} test key sees sandbox markets only, on every data route`, async () => {
      const key = await t.key(tier, 'test');
      let seen = 0;
      for (const url of urls(sandEth.uniqueKey, liveEth.uniqueKey)) {
        const res = await t.get(url, key);
        assert.ok([200, 404].includes(res.statusCode), `${url}: ${res.statusCode} ${res.body}`);
        const found = marketKeysIn(res);
        for (const k of found) assert.ok(sandKeys.has(k) && !liveKeys.has(k), `${url}: live market ${k}`);
        seen += found.size;
        if (url.endsWith(liveEth.uniqueKey)) assert.equal(res.json().error, 'MARKET_NOT_FOUND', url);
      }
      assert.ok(seen > 10, 'the routes returned sandbox markets');
    });
  }

  test('behavior: and a live key sees live markets only (the two never mix)', async () => {
    const key = await t.key('pro');
    for (const url of urls(liveEth.uniqueKey, sandEth.uniqueKey)) {
      const res = await t.get(url, key);
      for (const k of marketKeysIn(res)) assert.ok(liveKeys.has(k), `${url}: sandbox market ${k}`);
    }
  });
});

// ---- CORS and security headers ----------------------------------------------------------------------

describe('CORS policy: any origin, no credentials, rate-limit headers readable', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ tiers: GENEROUS_TIERS });
  });
  after(() => t.close());

  test('behavior: a preflight is answered 204 with the allowed methods and headers, without a key, not counted', async () => {
    const key = await t.key('pro');
    const before = (await t.get('/api/v1/client/quota', key)).json().data.daily.used;
    for (const url of ['/api/v1/markets', '/api/v1/risk/positions-at-risk', '/api/v1/client/api-keys']) {
      const res = await t.app.inject({
        method: 'OPTIONS',
        url,
        headers: {
          origin: 'https://app.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
      assert.equal(res.statusCode, 204, url);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.equal(res.headers['access-control-allow-methods'], 'GET, POST, DELETE');
      assert.equal(
        res.headers['access-control-allow-headers'],
        'authorization, content-type, idempotency-key',
      );
      assert.equal(res.headers['access-control-max-age'], '600');
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      assert.equal(res.body, '');
    }
    assert.equal((await t.get('/api/v1/client/quota', key)).json().data.daily.used, before);
  });

  test('behavior: answers, errors included, allow any origin, expose the rate-limit headers, never credentials', async () => {
    const key = await t.key('pro');
    const origin = { origin: 'https://app.example' };
    for (const res of [
      await t.get('/api/v1/markets', key, origin),
      await t.get('/api/v1/markets', undefined, origin), // 401
      await t.get('/api/v1/markets?limit=0', key, origin), // 400
      await t.get('/api/v1/nope', key, origin), // 404
      await t.get('/api/v1/health', undefined, origin),
    ]) {
      assert.equal(res.headers['access-control-allow-origin'], '*', res.body);
      assert.equal(res.headers['access-control-allow-credentials'], undefined);
      const exposed = String(res.headers['access-control-expose-headers']).split(/, */);
      for (const h of [
        'x-ratelimit-limit',
        'x-ratelimit-remaining',
        'x-ratelimit-reset',
        'retry-after',
        'x-request-id',
      ]) {
        assert.ok(exposed.includes(h), `${h} not exposed`);
      }
    }
  });
});

describe('security headers', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp({ tiers: GENEROUS_TIERS });
  });
  after(() => t.close());

  test('default: every JSON answer, success or error, carries nosniff, a no-framing CSP, and no X-Powered-By', async () => {
    const key = await t.key('pro');
    const answers = {
      ok: await t.get('/api/v1/markets', key),
      health: await t.get('/api/v1/health'),
      openapi: await t.get('/api/v1/openapi.json'),
      unauthorized: await t.get('/api/v1/markets'),
      invalid: await t.get('/api/v1/markets?limit=0', key),
      notFound: await t.get('/api/v1/nope'),
      badPath: await t.get('/api/v1/markets/%E0%A4%A', key),
    };
    for (const [name, res] of Object.entries(answers)) {
      assert.match(String(res.headers['content-type']), /^application\/json/, name);
      assert.equal(res.headers['x-content-type-options'], 'nosniff', name);
      const csp = String(res.headers['content-security-policy']);
      assert.match(csp, /default-src 'none'/, name);
      assert.match(csp, /frame-ancestors 'none'/, name);
      assert.equal(res.headers['x-powered-by'], undefined, name);
      assert.equal(res.headers.server, undefined, name);
      assert.ok(res.headers['x-request-id'], name);
    }
    for (const name of ['ok', 'health', 'unauthorized', 'notFound'] as const) {
      const res = answers[name];
      assert.equal(res.headers['x-frame-options'], 'SAMEORIGIN', name);
      assert.match(String(res.headers['strict-transport-security']), /max-age=\d+/, name);
      assert.equal(res.headers['referrer-policy'], 'no-referrer', name);
    }
  });

  test('default: the docs page may not be framed either', async () => {
    const res = await t.get('/docs/');
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
  });
});
