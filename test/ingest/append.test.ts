import assert from 'node:assert/strict';
import { test } from 'node:test';
import { append } from '../../src/ingest/append.ts';

test('behavior: append takes more items than push(...items) can (a first sync has millions of logs)', () => {
  const many = Array.from({ length: 300_000 }, (_, i) => i);
  assert.throws(() => [].push(...(many as never[])), RangeError);
  const into = [-1];
  assert.equal(append(into, many).length, 300_001);
  assert.deepEqual([into[0], into[1], into.at(-1)], [-1, 0, 299_999]);
});
