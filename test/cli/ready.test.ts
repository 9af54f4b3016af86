import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { readyText } from '../../src/cli/ready.ts';

describe('readyText', () => {
  test('default: names the URLs on localhost when listening on every interface, and the data', () => {
    const text = readyText(
      { host: '0.0.0.0', port: 8080 },
      { kind: 'sandbox', marketCount: 4000, positionCount: 50000 },
      12_345,
    );
    assert.match(
      text,
      /^lrds: ready in 12\.3 s, serving sandbox data \(4,000 markets, 50,000 positions; labelled snapshot\)/,
    );
    for (const url of [
      'http://localhost:8080/api/v1',
      'http://localhost:8080/docs',
      'http://localhost:8080/dashboard',
    ]) {
      assert.ok(text.includes(url), url);
    }
  });

  test('behavior: an IPv6 host is bracketed; live data says so', () => {
    const text = readyText(
      { host: '::1', port: 9000 },
      { kind: 'live', marketCount: 12, positionCount: 3 },
      900,
    );
    assert.ok(text.includes('http://[::1]:9000/docs'));
    assert.match(text, /serving live data of the sources file \(12 markets\)/);
  });

  test('behavior: live data no source of which has been read yet says so, and where to look', () => {
    const text = readyText(
      { host: '127.0.0.1', port: 8080 },
      { kind: 'live', marketCount: 0, positionCount: 0, synced: false },
      900,
    );
    assert.match(
      text,
      /serving no live data yet: no source of the sources file has been read \(health below says why\)/,
    );
    assert.ok(text.includes('http://127.0.0.1:8080/api/v1/health'));
  });
});
