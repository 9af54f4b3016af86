import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import zlib from 'node:zlib';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ERROR_STATUS } from '../../src/http/errors.ts';
import { ManualClock } from '../clock.ts';
import { createTestApp, makeMarket, makePosition, modelOf, type TestApp, tiersWith } from '../helpers.ts';

/**
 * Hostile input, property-based: every route of the OpenAPI document, plus the unauthenticated
 * ones and unknown paths, with arbitrary path parameters, query strings, headers, methods and
 * bodies. Invariants: never a 5xx; every error body is the "Errors" (docs/decisions.md) shape with a known code and its
 * status; nothing internal leaks (stack frames, file paths, SQL, framework codes).
 *
 * Runs per property: FUZZ_RUNS (default 200, a few seconds). Deep run: `FUZZ_RUNS=5000 npm run fuzz`.
 * Reproduce a failure with the seed fast-check prints: FUZZ_SEED=<seed>.
 *
 * Then over a raw socket: what Node's HTTP parser refuses before Fastify sees it.
 */

const RUNS = Number(process.env.FUZZ_RUNS ?? 200);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const fcParams = { numRuns: RUNS, ...(SEED === undefined ? {} : { seed: SEED }) };

const clock = new ManualClock();
const eth = makeMarket({ chainId: 1 });
const base = makeMarket({ chainId: 8453, protocol: 'aave' });
const live = modelOf([eth, base], [makePosition(eth), makePosition(base)], clock);
/** No limits: the fuzz is about parsing and validation, not about 429s. */
const UNLIMITED = tiersWith((tiers) => {
  for (const t of Object.values(tiers)) {
    t.ratePerSecond = 1_000_000;
    t.dailyQuota = null;
    t.monthlyQuota = null;
  }
});

/** Things an error body must never contain, unless the request itself carried them (echoed). */
const LEAK =
  /\n\s+at |\bat \S+ \(\S*:\d+:\d+\)|node_modules|file:\/\/|\/work\/|\/home\/|\.(ts|js|mjs|cjs):\d+|sqlite|\bSELECT\b|\bINSERT INTO\b|FST_ERR|statusCode|TypeError|ReferenceError|SyntaxError|RangeError/i;

const KNOWN_CODES = new Set(Object.keys(ERROR_STATUS));

interface Route {
  method: string;
  path: string;
  query: string[];
}

interface Req {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

let t: TestApp;
let routes: Route[];
const keys: Record<string, string> = {};

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** The encodings a response may come in, by the request's Accept-Encoding (the server offers br and gzip). */
const ENCODINGS_FOR: Record<string, readonly (string | undefined)[]> = {
  gzip: ['gzip', undefined],
  br: ['br', undefined],
  '*': ['br', 'gzip', undefined],
};

/**
 * The body as the client reads it: decoded when the server compressed it, which it does only in
 * an encoding the client asked for. A response to HEAD has none.
 */
function bodyOf(req: Req, res: LightMyRequestResponse): string {
  const at = `${req.method} ${req.url.slice(0, 300)} -> ${res.statusCode}`;
  if (req.method === 'HEAD') {
    assert.equal(res.rawPayload.length, 0, `a body for HEAD: ${at}`);
    return '';
  }
  const encoding = res.headers['content-encoding'];
  const asked = req.headers['accept-encoding'];
  assert.ok(
    (asked === undefined ? [undefined] : (ENCODINGS_FOR[asked] ?? [undefined])).includes(encoding as string),
    `content-encoding ${String(encoding)} for accept-encoding ${String(asked)}: ${at}`,
  );
  try {
    if (encoding === 'gzip') return zlib.gunzipSync(res.rawPayload).toString('utf8');
    if (encoding === 'br') return zlib.brotliDecompressSync(res.rawPayload).toString('utf8');
  } catch (err) {
    assert.fail(`a ${encoding} body that does not decode (${(err as Error).message}): ${at}`);
  }
  return res.body;
}

/** Checks every invariant on one response; the message says which request broke it. */
function checkResponse(req: Req, res: LightMyRequestResponse): void {
  const text = bodyOf(req, res);
  const what = `${req.method} ${req.url.slice(0, 300)} -> ${res.statusCode} ${JSON.stringify(text.slice(0, 300))}`;
  assert.ok(res.statusCode < 500, `5xx: ${what}`);
  assert.ok(res.headers['x-request-id'], `no X-Request-Id: ${what}`);
  assert.equal(res.headers['x-powered-by'], undefined, what);
  const input = `${req.url} ${safeDecode(req.url)} ${JSON.stringify(req.headers)} ${req.payload ?? ''}`;
  if (res.statusCode >= 300 && LEAK.test(text) && !LEAK.test(input)) {
    assert.fail(`internal detail in the body: ${what}`);
  }
  if (res.statusCode < 400 || req.method === 'HEAD') return;
  assert.match(String(res.headers['content-type']), /^application\/json/, what);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    assert.fail(`error body is not JSON: ${what}`);
  }
  assert.ok(body !== null && typeof body === 'object' && !Array.isArray(body), what);
  const b = body as Record<string, unknown>;
  assert.equal(typeof b.error, 'string', what);
  assert.equal(typeof b.message, 'string', what);
  assert.ok(KNOWN_CODES.has(b.error as string), `unknown code: ${what}`);
  assert.equal(ERROR_STATUS[b.error as keyof typeof ERROR_STATUS], res.statusCode, `code/status: ${what}`);
  assert.ok(!('data' in b) && !('stack' in b), what);
  if (b.error === 'INVALID_PARAMETER') {
    assert.ok(Array.isArray(b.details) && b.details.length > 0, what);
    for (const d of b.details as Record<string, unknown>[]) {
      assert.equal(typeof d.parameter, 'string', what);
      assert.equal(typeof d.problem, 'string', what);
    }
  }
}

async function send(req: Req): Promise<void> {
  const res = await t.app.inject({
    method: req.method as 'GET',
    url: req.url,
    headers: req.headers,
    ...(req.payload === undefined ? {} : { payload: req.payload }),
  });
  checkResponse(req, res);
}

// ---- arbitraries -------------------------------------------------------------------------

/** Fragments put into the URL as they are: broken percent-encoding, separators, path tricks. */
const RAW_FRAGMENTS = [
  '',
  '%',
  '%%',
  '%E0%A4%A',
  '%E0%A4',
  '%FF',
  '%C0%AF',
  '%00',
  '%0A',
  '%0D%0A',
  '%2F',
  '%2e%2e',
  '..',
  '.',
  ';',
  ';a=b',
  '&',
  '&&',
  '=',
  '==',
  '?',
  ',',
  ',,',
  '+',
  '%20',
  '[]',
  '[0]=1',
  '__proto__',
  'constructor',
  'toString',
];

/** Values that are well-formed text but hostile as parameters. */
const NASTY_VALUES = [
  '0',
  '-0',
  '+0',
  '1',
  '-1',
  '1.5',
  '1e400',
  '-1e400',
  '1e-400',
  '5e-324',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '0b1',
  '0o7',
  '1_000',
  ' 1',
  '1 ',
  '9007199254740993',
  '99999999999999999999999999',
  'true',
  'false',
  'null',
  'undefined',
  '[]',
  '{}',
  "'",
  '"',
  '<script>alert(1)</script>',
  '{{7*7}}',
  '#{7*7}',
  "' OR 1=1 --",
  'morpho',
  'MORPHO',
  'aave',
  'weth',
  'wstETH/WETH',
  '1,8453',
  '1,,8453',
  '1,a',
  ' 1 , 8453 ',
  '2026-01-01',
  '2026-13-45',
  '0000-00-00T00:00:00Z',
  '2026-11-22T10:00:00+99:99',
  'morpho-1-0xabc',
  'morpho-8453-0xabc',
  'MORPHO-1-0XABC',
  'morpho-99999999999999-x',
  'morpho-1-',
  '-1-x',
  'aave-1-a-b',
  'key_none',
  'lrds_live_',
];

const encode = (s: string) => encodeURIComponent(s.toWellFormed());

const textValue = fc.oneof(
  fc.constantFrom(...NASTY_VALUES).map(encode),
  fc.constantFrom(...RAW_FRAGMENTS),
  fc.string({ maxLength: 40 }).map(encode),
  fc.string({ unit: 'binary', maxLength: 20 }).map(encode),
  fc
    .string({ unit: fc.integer({ min: 0, max: 31 }).map((c) => String.fromCharCode(c)), maxLength: 8 })
    .map(encode),
  fc.double().map((n) => encode(String(n))),
  fc.bigInt().map(String),
  fc.integer({ min: 1, max: 40 }).map((n) => 'A'.repeat(256 * n)), // up to 10 KB
  fc
    .tuple(fc.constantFrom(...RAW_FRAGMENTS), fc.string({ maxLength: 10 }).map(encode))
    .map(([a, b]) => a + b),
);

const KNOWN_QUERY = [
  'query',
  'limit',
  'protocol',
  'chainIds',
  'healthFactorThreshold',
  'minBorrowUsd',
  'marketId',
  'startDate',
];

function queryString(known: string[]): fc.Arbitrary<string> {
  const name = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...known, ...KNOWN_QUERY) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_FRAGMENTS) },
    { weight: 1, arbitrary: fc.string({ maxLength: 12 }).map(encode) },
  );
  const pair = fc.oneof(
    { weight: 6, arbitrary: fc.tuple(name, textValue).map(([k, v]) => `${k}=${v}`) },
    { weight: 1, arbitrary: name },
  );
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    {
      weight: 8,
      arbitrary: fc
        .tuple(fc.array(pair, { maxLength: 6 }), fc.constantFrom('&', '&', '&', ';', '&&'))
        .map(([pairs, sep]) => (pairs.length === 0 ? '?' : `?${pairs.join(sep)}`)),
    },
  );
}

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH'];

function authorization(): fc.Arbitrary<string | undefined> {
  const key = fc.constantFrom(...Object.values(keys));
  return fc.oneof(
    { weight: 6, arbitrary: key.map((k) => `Bearer ${k}`) },
    { weight: 1, arbitrary: fc.constant(undefined) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('bearer', 'BEARER', 'Basic', 'Token', 'Bearer:', ''), key)
        .map(([s, k]) => `${s} ${k}`),
    },
    { weight: 1, arbitrary: key.map((k) => `Bearer  ${k}  x`) },
    { weight: 1, arbitrary: key.map((k) => `Bearer ${k.slice(0, -1)}`) },
    { weight: 1, arbitrary: key.map((k) => `Bearer ${k.toUpperCase()}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 80 }).map((s) => `Bearer ${s}`) },
    { weight: 1, arbitrary: fc.string({ unit: 'grapheme-ascii', maxLength: 80 }) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 20 }).map((n) => `Bearer ${'x'.repeat(1024 * n)}`) },
    { weight: 1, arbitrary: fc.constantFrom('Bearer', 'Bearer ', 'Bearer lrds_live_', 'Bearer lrds_test_') },
  );
}

const CONTENT_TYPES = [
  'application/json',
  'application/json; charset=utf-8',
  'application/JSON',
  'application/vnd.api+json',
  'text/plain',
  'text/html',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '',
  ';;;',
  'application/json; charset=latin1',
];

const bodyArb = fc.option(
  fc.record({
    contentType: fc.constantFrom(...CONTENT_TYPES),
    payload: fc.oneof(
      fc.constantFrom('{}', '[]', 'null', '"x"', '1', '{', '{"name":', '{"__proto__":{"admin":true}}', ''),
      fc.json({ maxDepth: 3 }),
      fc
        .record({ name: fc.string({ maxLength: 120 }), mode: fc.constantFrom('live', 'test', 'LIVE', '') })
        .map((o) => JSON.stringify(o)),
      fc.string({ maxLength: 100 }),
      fc.integer({ min: 3, max: 20 }).map((n) => JSON.stringify({ name: 'n'.repeat(1024 * n) })),
    ),
  }),
  { freq: 3 },
);

const extraHeaders = fc.record(
  {
    accept: fc.constantFrom('*/*', 'application/json', 'text/html', 'application/xml', ''),
    origin: fc.constantFrom('https://evil.example', 'null', 'http://localhost:3000'),
    'x-forwarded-for': fc.constantFrom('1.2.3.4', 'garbage', '::1, 10.0.0.1'),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity', '*'),
    'if-none-match': fc.constantFrom('*', '"abc"'),
    range: fc.constantFrom('bytes=0-10', 'bytes=-1', 'nonsense'),
  },
  { requiredKeys: [] },
);

function fillPath(path: string, segment: string): string {
  return path.replace(/\{[^}]+\}/g, segment);
}

const pathParam = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom(eth.uniqueKey, base.uniqueKey, eth.uniqueKey.toUpperCase()) },
  { weight: 4, arbitrary: textValue },
);

/** Requests to the documented routes, mostly shaped like them, with hostile parts. */
function routeRequest(): fc.Arbitrary<Req> {
  return fc
    .tuple(
      fc.constantFrom(...routes),
      fc.oneof(
        { weight: 5, arbitrary: fc.constant(null) },
        { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
      ),
      pathParam,
      fc.constantFrom('', '', '', '', '/', '//', '/x', ';x=1', '%00'),
      authorization(),
      bodyArb,
      extraHeaders,
    )
    .chain(([route, method, param, suffix, auth, body, extra]) =>
      queryString(route.query).map((qs): Req => {
        const headers: Record<string, string> = { ...extra };
        if (auth !== undefined) headers.authorization = auth;
        const m = method ?? route.method;
        const req: Req = { method: m, url: fillPath(route.path, param) + suffix + qs, headers };
        if (body && m !== 'GET' && m !== 'HEAD') {
          headers['content-type'] = body.contentType;
          req.payload = body.payload;
        }
        return req;
      }),
    );
}

const UNAUTHENTICATED = ['/api/v1/health', '/api/v1/openapi.json', '/docs', '/docs/', '/docs/json'];

/** Health, the API description, docs, and paths no route knows. */
function otherRequest(): fc.Arbitrary<Req> {
  const segment = fc.oneof(
    fc.constantFrom('api', 'v1', 'v2', 'markets', 'risk', 'client', 'docs', 'health', '..', '.', ''),
    textValue,
  );
  const path = fc.oneof(
    fc.constantFrom(...UNAUTHENTICATED),
    fc.array(segment, { minLength: 1, maxLength: 6 }).map((s) => `/${s.join('/')}`),
    fc.array(segment, { minLength: 1, maxLength: 3 }).map((s) => `/api/v1/${s.join('/')}`),
    fc.constantFrom(...UNAUTHENTICATED).chain((p) => fc.constantFrom(...RAW_FRAGMENTS).map((f) => p + f)),
  );
  return fc
    .tuple(
      path,
      fc.constantFrom(...METHODS),
      fc.constantFrom('', '?x=1', '?limit=1e400', '?%E0%A4%A', '?a=%00&a=%00'),
      authorization(),
      extraHeaders,
    )
    .map(([p, method, qs, auth, extra]): Req => {
      const headers: Record<string, string> = { ...extra };
      if (auth !== undefined) headers.authorization = auth;
      return { method, url: p + qs, headers };
    });
}

before(async () => {
  t = await createTestApp({
    clock,
    live,
    tiers: UNLIMITED,
    // Webhook URLs are resolved by a resolver that knows no name (no DNS lookups while fuzzing).
    events: {
      resolve: async () => Promise.reject(Object.assign(new Error('not found'), { code: 'ENOTFOUND' })),
    },
  });
  for (const tier of ['free', 'pro', 'enterprise'] as const) {
    keys[tier] = await t.key(tier);
    keys[`${tier}-test`] = await t.key(tier, 'test');
  }
  // A revoked key, for the 401 path.
  const revoked = await t.key('pro');
  const id = (await t.get('/api/v1/client/profile', revoked)).json().data.key.id;
  await t.keys.revoke(id);
  keys.revoked = revoked;

  const doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
  routes = [];
  for (const [path, ops] of Object.entries<Record<string, { parameters?: { in: string; name: string }[] }>>(
    doc.paths,
  )) {
    for (const [method, op] of Object.entries(ops)) {
      // The event stream answers a valid request with a stream that does not end, which inject
      // would wait for: its refusals are tested over a socket (test/http/webhooks.test.ts).
      if (path === '/events/stream') continue;
      routes.push({
        method: method.toUpperCase(),
        // document paths are relative to its server URL (/api/v1)
        path: `${doc.servers[0].url}${path}`,
        query: (op.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name),
      });
    }
  }
});
after(() => t.close());

describe('fuzz: hostile input over every route', () => {
  test('default: the route list comes from the OpenAPI document and covers every route', () => {
    const names = routes.map((r) => `${r.method} ${r.path}`);
    assert.ok(names.includes('GET /api/v1/risk/positions-at-risk'), names.join(', '));
    assert.ok(names.includes('POST /api/v1/client/api-keys'));
    assert.ok(names.includes('DELETE /api/v1/client/api-keys/{keyId}'));
    assert.ok(routes.length >= 10);
  });

  test('error: documented routes with arbitrary parameters, query, headers, methods and bodies', async () => {
    await fc.assert(fc.asyncProperty(routeRequest(), send), fcParams);
  });

  test('error: health, OpenAPI, docs and unknown paths with arbitrary input', async () => {
    await fc.assert(fc.asyncProperty(otherRequest(), send), fcParams);
  });

  test('error: arbitrary bodies on POST /client/api-keys', async () => {
    const arb = fc.tuple(bodyArb, authorization()).map(([body, auth]): Req => {
      const headers: Record<string, string> = {};
      if (auth !== undefined) headers.authorization = auth;
      if (body) headers['content-type'] = body.contentType;
      return {
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers,
        ...(body ? { payload: body.payload } : {}),
      };
    });
    await fc.assert(fc.asyncProperty(arb, send), fcParams);
  });

  test('error: known hostile values, each one on each query parameter of each route', async () => {
    for (const r of routes) {
      for (const name of r.query) {
        for (const v of [...NASTY_VALUES.map(encode), ...RAW_FRAGMENTS, 'A'.repeat(10_240)]) {
          for (const qs of [`?${name}=${v}`, `?${name}=1&${name}=${v}`]) {
            await send({
              method: r.method,
              url: fillPath(r.path, eth.uniqueKey) + qs,
              headers: { authorization: `Bearer ${keys.enterprise}` },
            });
          }
        }
      }
    }
  });

  test('error: numbers JavaScript cannot hold are refused, not turned into Infinity', async () => {
    const key = keys.enterprise!;
    for (const [url, parameter] of [
      ['/api/v1/markets?limit=1e400', 'limit'],
      ['/api/v1/markets?limit=Infinity', 'limit'],
      ['/api/v1/risk/positions-at-risk?healthFactorThreshold=1e400', 'healthFactorThreshold'],
      ['/api/v1/risk/positions-at-risk?healthFactorThreshold=Infinity', 'healthFactorThreshold'],
      ['/api/v1/risk/positions-at-risk?healthFactorThreshold=-Infinity', 'healthFactorThreshold'],
      ['/api/v1/risk/positions-at-risk?minBorrowUsd=1e400', 'minBorrowUsd'],
    ] as const) {
      const res = await t.get(url, key);
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().details[0].parameter, parameter, url);
    }
  });

  test('error: bad percent-encoding and over-long segments in the path are "Errors" (docs/decisions.md) 400s', async () => {
    for (const url of [
      '/api/v1/markets/%E0%A4%A',
      '/api/v1/%E0%A4%A',
      `/api/v1/markets/${'a'.repeat(400)}`,
    ]) {
      const res = await t.get(url, keys.pro);
      assert.equal(res.statusCode, 400, url);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
      assert.deepEqual(Object.keys(res.json()), ['error', 'message', 'details']);
      assert.ok(res.headers['x-request-id']);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
    }
  });
});

describe('request bodies on POST /client/api-keys', () => {
  const post = (payload: string, contentType: string) =>
    t.app.inject({
      method: 'POST',
      url: '/api/v1/client/api-keys',
      headers: { authorization: `Bearer ${keys.pro}`, 'content-type': contentType },
      payload,
    });

  test('error: a body over 4 KB is 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await post(JSON.stringify({ name: 'n'.repeat(4200) }), 'application/json');
    assert.equal(res.statusCode, 413);
    assert.deepEqual(res.json(), { error: 'PAYLOAD_TOO_LARGE', message: 'Request body is too large.' });
  });

  test('error: a body that is not JSON is 415 UNSUPPORTED_MEDIA_TYPE', async () => {
    for (const ct of [
      'text/plain',
      'application/x-www-form-urlencoded',
      'text/html',
      'multipart/form-data; boundary=x',
    ]) {
      const res = await post('name=x', ct);
      assert.equal(res.statusCode, 415, ct);
      assert.equal(res.json().error, 'UNSUPPORTED_MEDIA_TYPE');
    }
  });

  test('error: malformed JSON is 400 INVALID_PARAMETER on the body', async () => {
    for (const payload of ['{', '{"name":', "{'name':'x'}", '{"name":"x"}}']) {
      const res = await post(payload, 'application/json');
      assert.equal(res.statusCode, 400, payload);
      assert.equal(res.json().error, 'INVALID_PARAMETER');
      assert.equal(res.json().details[0].parameter, 'body');
    }
  });
});

// ---- raw socket ----------------------------------------------------------------------------

interface RawAnswer {
  status: number | null;
  headers: Record<string, string>;
  body: string;
  closed: boolean;
}

let port = 0;

/** Writes bytes as they are and reads until the server closes (or 3 s). */
function raw(data: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let closed = false;
    const socket = net.connect(port, '127.0.0.1', () => socket.write(data));
    socket.on('data', (d) => chunks.push(d));
    socket.on('error', () => {});
    const timer = setTimeout(() => socket.destroy(), 3000);
    socket.on('close', () => {
      clearTimeout(timer);
      closed = true;
      const text = Buffer.concat(chunks).toString('latin1');
      const [head = '', ...rest] = text.split('\r\n\r\n');
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers: Record<string, string> = {};
      for (const l of lines) {
        const i = l.indexOf(':');
        if (i > 0) headers[l.slice(0, i).toLowerCase()] = l.slice(i + 1).trim();
      }
      const m = /^HTTP\/1\.1 (\d{3})/.exec(statusLine);
      resolve({ status: m ? Number(m[1]) : null, headers, body: rest.join('\r\n\r\n'), closed });
    });
  });
}

async function healthy(): Promise<void> {
  const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
  assert.equal(res.status, 200);
  await res.arrayBuffer();
}

describe('raw socket: requests Node refuses before routing', () => {
  before(async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });

  const cases: [string, string | Buffer, number][] = [
    ['garbage request line', 'GARBAGE\r\n\r\n', 400],
    ['unknown HTTP version', 'GET /api/v1/health HTTP/9.9\r\nHost: x\r\n\r\n', 400],
    ['header without colon', 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nNoColonHere\r\n\r\n', 400],
    ['NUL byte in a header', 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\u0000b\r\n\r\n', 400],
    ['NUL byte in the path', 'GET /api/v1/he\u0000alth HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['space in the path', 'GET /api/v1/ health HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['invalid method token', 'G@T /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n', 400],
    ['bare LF line ends', 'GET /api/v1/health HTTP/1.1\nHost: x\n\n', 400],
    ['obsolete header folding', 'GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-A: a\r\n  b\r\n\r\n', 400],
    [
      'Content-Length with Transfer-Encoding (smuggling)',
      'POST /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n',
      400,
    ],
    [
      'two Content-Length headers',
      'POST /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab',
      400,
    ],
    [
      'bad chunk size',
      'POST /api/v1/client/api-keys HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nContent-Type: application/json\r\n\r\nZZ\r\n',
      400,
    ],
    [
      'headers over 16 KB',
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(17_000)}\r\n\r\n`,
      431,
    ],
    [
      '3,000 small headers',
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: 1\r\n`).join('')}\r\n`,
      431,
    ],
  ];

  for (const [name, data, status] of cases) {
    test(`error: ${name} -> ${status} with a "Errors" (docs/decisions.md) body, then the server serves the next request`, async () => {
      const res = await raw(data);
      assert.equal(res.status, status, JSON.stringify(res));
      assert.ok(res.closed);
      const body = JSON.parse(res.body);
      assert.equal(typeof body.error, 'string');
      assert.equal(typeof body.message, 'string');
      assert.match(res.headers['content-type'] ?? '', /^application\/json/);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.ok(res.headers['x-request-id']);
      assert.doesNotMatch(res.body, LEAK);
      await healthy();
    });
  }

  test('error: HTTP/1.1 without Host is refused by Node (400, empty body)', async () => {
    const res = await raw('GET /api/v1/health HTTP/1.1\r\n\r\n');
    assert.equal(res.status, 400);
    assert.doesNotMatch(res.body, /[{a-z]/i);
    await healthy();
  });

  test('error: a declared body over 4 KB is refused from Content-Length alone', async () => {
    const res = await raw(
      `POST /api/v1/client/api-keys HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${keys.pro}\r\n` +
        'Content-Type: application/json\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n{"name":',
    );
    assert.equal(res.status, 413);
    assert.equal(JSON.parse(res.body).error, 'PAYLOAD_TOO_LARGE');
    await healthy();
  });

  test('behavior: a storm of 200 malformed connections at once leaves the server serving', async () => {
    const bad = Array.from({ length: 200 }, (_, i) =>
      raw(i % 2 ? 'GARBAGE\r\n\r\n' : `GET / HTTP/1.1\r\nX: ${'a'.repeat(17_000)}\r\n\r\n`),
    );
    const answers = await Promise.all(bad);
    assert.ok(answers.every((a) => a.status === 400 || a.status === 431));
    await healthy();
  });
});
