import assert from 'node:assert/strict';
import { test } from 'node:test';
import { conformanceChecker } from './openapi-conformance.ts';

const doc = {
  servers: [{ url: '/api/v1' }],
  paths: {
    '/things/{id}': {
      get: {
        responses: {
          '200': {
            headers: { ETag: { schema: { type: 'string' } } },
            content: {
              'application/json': {
                schema: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } },
              },
            },
          },
          '304': { headers: { ETag: { schema: { type: 'string' } } } },
        },
      },
    },
  },
};

const answer = (statusCode: number, body: string, headers: Record<string, string> = {}) => ({
  method: 'GET',
  url: '/api/v1/things/7?x=1',
  statusCode,
  headers,
  rawPayload: Buffer.from(body),
});

test('behavior: the conformance check fails undocumented statuses, headers and bodies', () => {
  const check = conformanceChecker(doc);
  assert.deepEqual(check(answer(200, '{"n":1}', { etag: '"a"' })), []);
  assert.deepEqual(check(answer(304, '', { etag: '"a"' })), []);
  assert.match(check(answer(404, '{}'))[0]!, /status not documented/);
  assert.match(
    check(answer(200, '{"n":1}', { 'retry-after': '1' }))[0]!,
    /header retry-after not documented/,
  );
  assert.match(check(answer(200, '{"n":"one"}'))[0]!, /does not match its schema/);
  assert.match(check(answer(200, 'nope'))[0]!, /not JSON/);
  assert.match(check(answer(304, 'x'))[0]!, /a body where none is documented/);
  // Paths the document does not describe are not checked.
  assert.deepEqual(check({ ...answer(404, 'x'), url: '/elsewhere' }), []);
});
