import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { must, mustSlice } from '../../src/domain/must.ts';

describe('must', () => {
  test('default: the value, falsy ones included', () => {
    assert.equal(must(0, 'zero'), 0);
    assert.equal(must('', 'empty'), '');
    assert.equal(must(false, 'false'), false);
    const o = { a: 1 };
    assert.equal(must(o, 'object'), o);
  });

  test('error: null or undefined is an internal error naming what is missing', () => {
    assert.throws(
      () => must(undefined, 'the price of WETH'),
      /^Error: internal error: the price of WETH is missing$/,
    );
    assert.throws(() => must(null, 'a row'), /internal error: a row is missing/);
  });
});

describe('mustSlice', () => {
  test('default: n items from start, as a tuple', () => {
    const [a, b] = mustSlice([1, 2, 3, 4], 1, 2, 'pair');
    assert.deepEqual([a, b], [2, 3]);
    assert.deepEqual(mustSlice(['x'], 0, 0, 'none'), []);
  });

  test('error: fewer than n items is an internal error naming them', () => {
    assert.throws(
      () => mustSlice([1, 2, 3], 2, 2, 'answers of market m'),
      /internal error: answers of market m: 1 of 2 from 2/,
    );
  });
});
