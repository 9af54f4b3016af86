import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import {
  installedVersion,
  PrecompressedAsset,
  preferredEncoding,
} from '../../src/http/pages/static-asset.ts';
import { createTestApp, type TestApp } from '../helpers.ts';

const VERSION = installedVersion('@scalar/fastify-api-reference');
const SCRIPT = `/docs/js/scalar.js?v=${VERSION}`;

describe('preferredEncoding', () => {
  test('default: brotli when both are accepted alike, as the answers are', () => {
    assert.equal(preferredEncoding('gzip, deflate, br, zstd'), 'br');
    assert.equal(preferredEncoding('*'), 'br');
  });
  test('behavior: q-values decide; q=0 refuses a coding', () => {
    assert.equal(preferredEncoding('br;q=0.5, gzip'), 'gzip');
    assert.equal(preferredEncoding('br;q=0, *'), 'gzip');
    assert.equal(preferredEncoding('GZIP;Q=1, BR;q=0.9'), 'gzip');
  });
  test('error: neither accepted is null', () => {
    assert.equal(preferredEncoding(undefined), null);
    assert.equal(preferredEncoding(''), null);
    assert.equal(preferredEncoding('identity'), null);
    assert.equal(preferredEncoding('deflate, *;q=0'), null);
  });
});

describe('PrecompressedAsset', () => {
  test('behavior: each coding is compressed once, and decodes to the source', async () => {
    const asset = new PrecompressedAsset('lending '.repeat(10_000));
    assert.equal(asset.encoded('br'), asset.encoded('br'));
    assert.equal(asset.encoded('gzip'), asset.encoded('gzip'));
    assert.ok(brotliDecompressSync(await asset.encoded('br')).equals(asset.source));
    assert.ok(gunzipSync(await asset.encoded('gzip')).equals(asset.source));
  });
});

describe('docs assets and pages over HTTP', () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(() => t.close());

  test('default: the docs page names its script with the package version', async () => {
    const res = await t.get('/docs/');
    assert.equal(res.statusCode, 200);
    assert.ok(res.body.includes(`<script src="js/scalar.js?v=${VERSION}"`), res.body);
    assert.match(res.body, /<title>Lending Risk Data API<\/title>/);
  });

  test('behavior: the versioned script is cached for a year, brotli or gzip, the same bytes as identity', async () => {
    const plain = await t.get(SCRIPT);
    assert.equal(plain.statusCode, 200);
    assert.equal(plain.headers['content-encoding'], undefined);
    assert.equal(plain.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.match(String(plain.headers.vary), /accept-encoding/i);
    assert.ok(plain.rawPayload.length > 1_000_000);
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
    ] as const) {
      const res = await t.get(SCRIPT, undefined, { 'accept-encoding': accept });
      assert.equal(res.headers['content-encoding'], encoding);
      assert.equal(res.headers['cache-control'], 'public, max-age=31536000, immutable');
      assert.equal(Number(res.headers['content-length']), res.rawPayload.length);
      assert.ok(res.rawPayload.length < plain.rawPayload.length / 3, `${encoding}: ${res.rawPayload.length}`);
      assert.ok(decode(res.rawPayload).equals(plain.rawPayload), `${encoding} decodes to the script`);
      const again = await t.get(SCRIPT, undefined, { 'accept-encoding': accept });
      assert.ok(again.rawPayload.equals(res.rawPayload));
    }
  });

  test('behavior: the script at an unversioned URL is revalidated, not cached long', async () => {
    for (const url of ['/docs/js/scalar.js', '/docs/js/scalar.js?v=0.0.1']) {
      const res = await t.get(url, undefined, { 'accept-encoding': 'br' });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['cache-control'], 'no-cache');
    }
  });

  test('default: the docs page runs only its own inline script (by hash) and no eval', async () => {
    const res = await t.get('/docs/');
    const csp = String(res.headers['content-security-policy']);
    const inline = /<script type="text\/javascript">([\s\S]*?)<\/script>/.exec(res.body)![1]!;
    const hash = createHash('sha256').update(inline).digest('base64');
    assert.match(csp, new RegExp(`script-src 'self' 'sha256-${hash.replace(/[+/]/g, '\\$&')}';`));
    assert.doesNotMatch(csp, /unsafe-eval/);
    assert.doesNotMatch(csp.split(';').find((d) => d.includes('script-src'))!, /unsafe-inline/);
    assert.match(csp, /frame-ancestors 'none'/);
  });

  test('default: the dashboard needs no key, is compressed, and allows only its own script and style', async () => {
    const res = await t.get('/dashboard', undefined, { 'accept-encoding': 'br' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.equal(res.headers['content-encoding'], 'br');
    const html = brotliDecompressSync(res.rawPayload).toString('utf8');
    assert.ok(html.length < 30_000, `small: ${html.length} bytes`);
    // self-contained: no external script, stylesheet, font or image
    // (an input's placeholder may show an example URL: it loads nothing)
    const external =
      /<(script|link|img)\b[^>]*\b(src|href)="(?!data:)|https?:\/\/(?!www\.w3\.org\/2000\/svg')/.exec(
        html.replace(/placeholder="[^"]*"/g, ''),
      );
    assert.equal(external?.[0], undefined);
    const csp = String(res.headers['content-security-policy']);
    for (const tag of ['script', 'style']) {
      const body = new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`).exec(html)![1]!;
      const hash = createHash('sha256').update(body).digest('base64');
      assert.ok(csp.includes(`${tag}-src 'sha256-${hash}'`), `${tag} allowed by hash: ${csp}`);
    }
    assert.match(csp, /^default-src 'none';/);
    assert.match(csp, /connect-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe/);
    assert.equal(res.headers['x-content-type-options'], 'nosniff');
    assert.equal(res.headers['cache-control'], 'no-cache');
  });

  test('behavior: the dashboard answers 304 to its ETag', async () => {
    const first = await t.get('/dashboard');
    const etag = String(first.headers.etag);
    assert.match(etag, /^"[\w-]+"$/);
    const again = await t.get('/dashboard', undefined, { 'if-none-match': etag });
    assert.equal(again.statusCode, 304);
    assert.equal(again.rawPayload.length, 0);
  });

  test('default: data answers keep their own Cache-Control', async () => {
    const key = await t.key('pro');
    const res = await t.get('/api/v1/markets', key, { 'accept-encoding': 'br' });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['cache-control'], 'private, max-age=0, must-revalidate');
    assert.equal(res.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'");
  });
});
