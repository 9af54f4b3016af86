import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { lazySerializers } from '../../src/http/lazy-serializers.ts';
import { createTestApp } from '../helpers.ts';

const SHARED = {
  $id: 'Money',
  type: 'object',
  properties: { amount: { type: 'number' }, symbol: { type: 'string' } },
  required: ['amount', 'symbol'],
};

/** Two routes whose answers go through response schemas (one of them a shared one), and a 404. */
function routes(app: FastifyInstance): void {
  app.addSchema(SHARED);
  app.get(
    '/a',
    {
      schema: {
        response: {
          200: {
            type: 'object',
            properties: { data: { type: 'array', items: { $ref: 'Money#' } }, n: { type: 'integer' } },
          },
          404: { type: 'object', properties: { error: { type: 'string' } } },
        },
      },
    },
    async (req, reply) =>
      (req.query as { missing?: string }).missing
        ? reply.code(404).send({ error: 'NOT_FOUND', extra: 'dropped by the schema' })
        : { data: [{ amount: 1.5, symbol: 'USDC', secret: 'dropped' }], n: 2.0, other: true },
  );
  app.get(
    '/b',
    { schema: { response: { 200: { type: 'object', properties: { ok: { type: 'boolean' } } } } } },
    async () => ({ ok: 1 }),
  );
}

describe('response serializers compiled on first use', () => {
  test('behavior: nothing is compiled at ready; a first answer compiles its own; the bytes are those of the default compiler', async () => {
    const lazy = lazySerializers();
    const app = Fastify({
      schemaController: { compilersFactory: { buildSerializer: lazy.buildSerializer } },
    });
    const plain = Fastify();
    routes(app);
    routes(plain);
    await app.ready();
    await plain.ready();
    try {
      const before = lazy.pending;
      assert.equal(before, 6, 'GET and HEAD of three route/status pairs, none compiled');
      for (const url of ['/a', '/a?missing=1', '/b']) {
        const [ours, theirs] = [await app.inject(url), await plain.inject(url)];
        assert.equal(ours.statusCode, theirs.statusCode, url);
        assert.equal(ours.body, theirs.body, url);
        assert.equal(ours.headers['content-type'], theirs.headers['content-type'], url);
      }
      assert.equal(lazy.pending, 3, "the HEAD routes' are not compiled yet");
    } finally {
      await app.close();
      await plain.close();
    }
  });

  test('behavior: warm() compiles the rest in the background and stops when told', async () => {
    const lazy = lazySerializers();
    const app = Fastify({
      exposeHeadRoutes: false,
      schemaController: { compilersFactory: { buildSerializer: lazy.buildSerializer } },
    });
    routes(app);
    await app.ready();
    try {
      await app.inject('/b');
      assert.equal(lazy.pending, 2);
      await lazy.warm(
        () => true,
        (err) => assert.fail(String(err)),
      );
      assert.equal(lazy.pending, 2, 'stopped before compiling anything');
      await lazy.warm(
        () => false,
        (err) => assert.fail(String(err)),
      );
      assert.equal(lazy.pending, 0);
      assert.deepEqual((await app.inject('/a')).json(), { data: [{ amount: 1.5, symbol: 'USDC' }], n: 2 });
    } finally {
      await app.close();
    }
  });

  test('error: a schema that does not compile is reported by warm(), not thrown', async () => {
    const lazy = lazySerializers();
    const app = Fastify({
      exposeHeadRoutes: false,
      schemaController: { compilersFactory: { buildSerializer: lazy.buildSerializer } },
    });
    app.get('/bad', { schema: { response: { 200: { $ref: 'Nowhere#' } } } }, async () => ({}));
    await app.ready();
    try {
      const errors: unknown[] = [];
      await lazy.warm(
        () => false,
        (err) => errors.push(err),
      );
      assert.equal(errors.length, 1);
      assert.match(String(errors[0]), /Nowhere/);
    } finally {
      await app.close();
    }
  });

  test("behavior: every response schema of the service's routes compiles", async () => {
    const t = await createTestApp();
    try {
      const errors: unknown[] = [];
      await t.app.serializers.warm(
        () => false,
        (err) => errors.push(err),
      );
      assert.deepEqual(errors, []);
      assert.equal(t.app.serializers.pending, 0);
    } finally {
      await t.close();
    }
  });
});
