import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { MEASURED_METHODS } from '../../src/store/measure.ts';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';

describe('store timing', () => {
  for (const cls of [SqliteStore, PostgresStore]) {
    test(`behavior: every port method of ${cls.name} is timed`, () => {
      const proto = cls.prototype as unknown as Record<string, unknown>;
      for (const op of MEASURED_METHODS) {
        const method = proto[op];
        assert.equal(typeof method, 'function', `${cls.name}.${op} exists`);
        assert.equal((method as { name: string }).name, 'measured', `${cls.name}.${op} is timed`);
      }
    });
  }

  test('behavior: the measured list names the change feeds and vault loads', () => {
    for (const op of [
      'loadVaults',
      'applyPositionChanges',
      'positionChangesSince',
      'applyMarketChanges',
      'marketChangesSince',
    ]) {
      assert.ok((MEASURED_METHODS as string[]).includes(op), op);
    }
  });
});
