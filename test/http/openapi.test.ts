import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { ERROR_CODES } from '../../src/http/errors.ts';
import { createTestApp, type TestApp } from '../helpers.ts';

let t: TestApp;
let doc: any;

before(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  doc = res.json();
});
after(() => t.close());

/** A response or parameter of the document, with a local `$ref` followed. */
function deref(value: any): any {
  if (typeof value?.$ref !== 'string') return value;
  return value.$ref
    .slice(2)
    .split('/')
    .reduce((node: any, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
}

describe('OpenAPI document', () => {
  test('default: OpenAPI 3.1, version 1.0.0, bearer security scheme', () => {
    assert.match(doc.openapi, /^3\.1\./);
    assert.equal(doc.info.version, '1.0.0');
    assert.deepEqual(doc.components.securitySchemes.bearerAuth, {
      type: 'http',
      scheme: 'bearer',
      description: 'API key: `lrds_live_…` or `lrds_test_…`.',
    });
  });

  test('behavior: every operation has an id, a summary, a 2xx schema and documented errors with examples', () => {
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const name = `${method.toUpperCase()} ${path}`;
        assert.ok(op.operationId, `${name}: operationId`);
        assert.ok(op.summary, `${name}: summary`);
        const ok = op.responses['200'] ?? op.responses['201'] ?? op.responses['202'];
        // The event stream's success is text/event-stream; every other one JSON.
        const media = ok?.content?.['application/json'] ?? ok?.content?.['text/event-stream'];
        assert.ok(media?.schema, `${name}: success schema`);
        // Routes that need a key (health says `security: []`: none).
        if (!op.security?.length) continue;
        for (const status of ['401', '429', '500', '503']) {
          const r = deref(op.responses[status]);
          assert.ok(r, `${name}: documents ${status}`);
          const media = r.content['application/json'];
          assert.ok(media.examples || media.example || media.schema.examples, `${name} ${status}: example`);
        }
        for (const p of (op.parameters ?? []).map(deref))
          assert.ok(p.description || p.schema?.description, `${name}: ${p.name} described`);
      }
    }
  });

  test('behavior: every data route documents 403 TIER_FORBIDDEN', () => {
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        if (!op.security?.length || op.tags.includes('Client')) continue;
        assert.ok(op.responses['403'], `${method} ${path}`);
      }
    }
  });

  test('behavior: every error code of the vocabulary is in the document', () => {
    const text = JSON.stringify(doc);
    for (const code of ERROR_CODES) assert.ok(text.includes(code), code);
  });

  test('behavior: the docs page is served without a key', async () => {
    const res = await t.app.inject({ url: '/docs' });
    const page = [301, 302].includes(res.statusCode)
      ? await t.app.inject({ url: String(res.headers.location) })
      : res;
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
  });

  test('behavior: the docs page, its script, the dashboard and the document answer a matching HEAD with 304', async () => {
    // A HEAD that the client's copy matches: 304 with no body, never a 500.
    for (const url of ['/docs/', '/docs/js/scalar.js', '/dashboard', '/api/v1/openapi.json']) {
      for (const method of ['HEAD', 'GET'] as const) {
        const res = await t.app.inject({ method, url, headers: { 'if-none-match': '*' } });
        assert.equal(res.statusCode, 304, `${method} ${url}`);
        assert.equal(res.body, '', `${method} ${url}`);
      }
    }
  });

  test('behavior: GET / and GET /api/v1 say where things are, without a key', async () => {
    for (const url of ['/', '/api/v1', '/api/v1/']) {
      const res = await t.app.inject({ url });
      assert.equal(res.statusCode, 200, url);
      const root = res.json();
      assert.equal(root.openapiUrl, '/api/v1/openapi.json');
      assert.equal(root.documentationUrl, '/docs/');
      assert.equal(root.healthUrl, '/api/v1/health');
      for (const path of [root.openapiUrl, root.documentationUrl, root.healthUrl, root.dashboardUrl])
        assert.equal((await t.app.inject({ url: path })).statusCode, 200, path);
    }
    assert.equal(doc.paths['/'].get.operationId, 'apiRoot');
  });

  test('behavior: unknown paths are 404 NOT_FOUND in the error shape, with a request id', async () => {
    const res = await t.app.inject({ url: '/api/v1/nothing-here' });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'NOT_FOUND');
    assert.match(String(res.headers['x-request-id']), /^req_/);
  });

  test('behavior: health needs no key and names the backends', async () => {
    const res = await t.app.inject({ url: '/api/v1/health' });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.status, 'ok');
    assert.deepEqual(body.store, { backend: 'sqlite', state: 'up' });
    assert.deepEqual(body.limiter, { backend: 'memory', state: 'up' });
    assert.equal(body.datasets.length, 2);
  });

  test('behavior: the README endpoint table lists exactly the routes', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const overview = readme.slice(
      readme.indexOf('## API overview'),
      readme.indexOf('\n## ', readme.indexOf('## API overview') + 1),
    );
    const listed = [...overview.matchAll(/^\| `(GET|POST|DELETE) (\/[^` ]*)`/gm)]
      .map(([, method, path]) => `${method} /api/v1${path}`)
      .filter((r) => !r.endsWith('/docs'))
      .sort();
    const routes = Object.entries<Record<string, unknown>>(doc.paths)
      .flatMap(([path, ops]) =>
        Object.keys(ops).map((m) => `${m.toUpperCase()} ${doc.servers[0].url}${path}`),
      )
      .concat('GET /api/v1/openapi.json')
      .sort();
    assert.deepEqual(listed, routes);
  });
});
