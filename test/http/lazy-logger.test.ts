import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, test } from 'node:test';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { lazyChild } from '../../src/http/lazy-logger.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      lines.push(JSON.parse(String(chunk)));
      done();
    },
  });
  const root = pino({ level }, stream) as unknown as FastifyBaseLogger;
  let children = 0;
  // Counts every child made, at any depth (children inherit the method).
  const child = root.child;
  root.child = function (this: FastifyBaseLogger, b: Record<string, unknown>, o?: Record<string, unknown>) {
    children++;
    return child.call(this, b, o as never);
  } as typeof root.child;
  return { root, lines, children: () => children };
}

describe('lazy request logger', () => {
  test('behavior: no child and no line for levels not written; a written line carries every binding, the key bound later included', async () => {
    const { root, lines, children } = capture('warn');
    const request = lazyChild(() => root, root, { reqId: 'r1' });
    request.info({ req: 'x' }, 'incoming request');
    const withKey = request.child({ keyId: 'k1' });
    withKey.info('request completed');
    withKey.debug('detail');
    assert.equal(children(), 0);
    assert.equal((withKey as unknown as pino.Logger).isLevelEnabled('info'), false);
    withKey.warn({ n: 1 }, 'store slow');
    withKey.error('failed');
    await new Promise((r) => setImmediate(r));
    // The request's child, then the key's, made for the first line written.
    assert.equal(children(), 2);
    assert.deepEqual(
      lines.map((l) => [l.msg, l.reqId, l.keyId, l.level]),
      [
        ['store slow', 'r1', 'k1', 40],
        ['failed', 'r1', 'k1', 50],
      ],
    );
    assert.equal(lines[0]!.n, 1);
  });

  test('behavior: a line before the key is known carries the request id only', async () => {
    const { root, lines } = capture('warn');
    const request = lazyChild(() => root, root, { reqId: 'r2' });
    request.error('no key');
    const withKey = request.child({ keyId: 'k2' });
    withKey.warn('after');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      lines.map((l) => [l.msg, l.reqId, l.keyId]),
      [
        ['no key', 'r2', undefined],
        ['after', 'r2', 'k2'],
      ],
    );
  });
});
