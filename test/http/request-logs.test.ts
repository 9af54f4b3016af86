import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createTestApp } from '../helpers.ts';

test('behavior: every log line of an authenticated request carries its request id and the key id, never the key', async () => {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(l));
      done();
    },
  });
  const t = await createTestApp({ logger: { level: 'info', stream } });
  const key = await t.key('pro');
  const id = (await t.get('/api/v1/client/profile', key)).json().data.key.id;
  const res = await t.get('/api/v1/markets', key, { 'x-request-id': 'trace-42' });
  assert.equal(res.statusCode, 200);
  await t.close();
  const mine = lines.filter((l) => l.reqId === 'trace-42');
  assert.ok(mine.length >= 2, 'request and response lines');
  const completed = mine.find((l) => l.msg === 'request completed');
  assert.ok(completed, 'the response line');
  assert.equal(completed.keyId, id);
  const text = JSON.stringify(lines);
  assert.ok(!text.includes(key), 'the key is in no log line');
});
