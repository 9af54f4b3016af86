import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { sortKeys } from '../src/http/openapi-document.ts';
import { conformanceChecker } from './openapi-conformance.ts';
import {
  EXAMPLES_FILE,
  exampleRequests,
  type Sandbox,
  sandboxApp,
  takeExamples,
} from './openapi-examples.ts';

/**
 * The served OpenAPI document as a reader meets it: every success has an example that is what
 * the deterministic sandbox serves and that validates against its schema; shared parts are
 * referenced; keys are sorted; it cites nothing outside the repository; it stays small.
 * The fix for a stale example: `node test/openapi-examples.ts --write`.
 */

let s: Sandbox;
let doc: any;
let text: string;
let taken: Record<string, unknown>;
let requests: Awaited<ReturnType<typeof exampleRequests>>;
const saved = JSON.parse(readFileSync(EXAMPLES_FILE, 'utf8')) as Record<string, unknown>;
/**
 * Answers whose values are not the sandbox's: about the caller's own keys and webhooks (their
 * ids, prefixes and secrets are drawn at random), and health (the times the running service last refreshed).
 * Their examples are checked against their schemas only.
 */
const NOT_SANDBOX = new Set([
  'health',
  'getProfile',
  'listApiKeys',
  'createApiKey',
  'revokeApiKey',
  'getUsage',
  'getQuota',
  'createWebhook',
  'listWebhooks',
  'getWebhook',
  'deleteWebhook',
  'testWebhook',
  'listWebhookDeliveries',
]);

before(async () => {
  s = await sandboxApp();
  const res = await s.t.app.inject({ url: '/api/v1/openapi.json' });
  text = res.body;
  doc = JSON.parse(text);
  requests = await exampleRequests(s, doc);
  // (revokes the key of the requests last)
  taken = await takeExamples(s);
});
after(() => s.close());

function operations(): [string, string, any][] {
  return Object.entries<Record<string, any>>(doc.paths).flatMap(([path, ops]) =>
    Object.entries<any>(ops).map(([method, op]) => [path, method, op] as [string, string, any]),
  );
}

describe('OpenAPI examples', () => {
  test('behavior: every 200 and 201 answer has an example of the sandbox', () => {
    for (const [path, method, op] of operations()) {
      for (const status of ['200', '201', '202']) {
        const media = op.responses[status]?.content?.['application/json'];
        if (!media) continue;
        assert.ok(media.examples?.sandbox?.value, `${method} ${path} ${status}: no example`);
        assert.deepEqual(media.examples.sandbox.value, saved[op.operationId]);
      }
    }
  });

  test('behavior: the examples are what the sandbox serves (but answers about your own keys, and health)', () => {
    assert.deepEqual(Object.keys(taken).sort(), Object.keys(saved).sort());
    // A positions-at-risk cursor names the snapshot of its set, drawn at random: compared without it.
    const comparable = (v: any) => {
      const out = structuredClone(v);
      if (out?.meta?.nextCursor) out.meta.nextCursor = '(a cursor)';
      return out;
    };
    for (const [id, example] of Object.entries(saved)) {
      if (NOT_SANDBOX.has(id)) continue;
      assert.deepEqual(
        comparable(example),
        comparable(taken[id]),
        `${id}: run \`node test/openapi-examples.ts --write\``,
      );
    }
  });

  test('behavior: every example validates against the schema of its answer', async () => {
    const check = conformanceChecker(doc);
    for (const r of requests) {
      const problems = check({
        method: r.method,
        url: r.url,
        statusCode: ['createApiKey', 'createWebhook'].includes(r.operationId)
          ? 201
          : r.operationId === 'testWebhook'
            ? 202
            : 200,
        headers: { 'content-type': 'application/json' },
        rawPayload: Buffer.from(JSON.stringify(saved[r.operationId])),
      });
      assert.deepEqual(problems, [], r.operationId);
    }
  });
});

describe('OpenAPI document shape', () => {
  test('behavior: well under 700 KB as dumped, shared errors, headers and parameters referenced', () => {
    const dumped = JSON.stringify(doc, null, 2);
    assert.ok(dumped.length < 660_000, `${dumped.length} characters`);
    assert.ok(Object.keys(doc.components.responses).length > 10);
    assert.ok(doc.components.headers['X-Request-Id']);
    assert.ok(doc.components.parameters.cursor);
    for (const [path, method, op] of operations())
      for (const [status, r] of Object.entries<any>(op.responses))
        if (/^[45]/.test(status)) assert.ok(r.$ref, `${method} ${path} ${status} is inline`);
  });

  test('behavior: keys are sorted (fields of a schema and examples keep their order)', () => {
    assert.equal(text, JSON.stringify(sortKeys(doc)));
    assert.deepEqual(Object.keys(doc.paths), Object.keys(doc.paths).sort());
  });

  test('behavior: every operation documents 405, 408, 431 and 429', () => {
    for (const [path, method, op] of operations())
      for (const status of ['405', '408', '429', '431'])
        assert.ok(op.responses[status], `${method} ${path} ${status}`);
  });

  test('behavior: no internal decision numbers and no document outside the repository', () => {
    assert.doesNotMatch(text, /\bD[0-9]{1,2}\b|DECISIONS|SPEC\.md|README/);
  });

  test('behavior: a stream of JSON lines is text, each line as x-itemSchema says', () => {
    const media = doc.paths['/liquidations'].get.responses['200'].content['application/x-ndjson'];
    assert.equal(media.schema.type, 'string');
    assert.ok(media['x-itemSchema'].anyOf);
  });
});
