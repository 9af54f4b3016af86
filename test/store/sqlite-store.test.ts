import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { storeContract } from '../contract/store-contract.ts';
import { tempDir } from '../helpers.ts';

storeContract('sqlite', async () => {
  const store = new SqliteStore(join(tempDir('lrds-store-'), 'lrds.db'));
  await store.migrate();
  return store;
});

test('behavior: two connections to one file see each other (CLI and server)', async () => {
  const file = join(tempDir('lrds-store-'), 'lrds.db');
  const server = new SqliteStore(file);
  const cli = new SqliteStore(file);
  await Promise.all([server.migrate(), cli.migrate()]);
  const before = await server.keysVersion();
  await cli.createAccount({ id: 'a', name: 'n', email: null, createdAt: 'x' });
  await cli.createKey({
    id: 'k',
    accountId: 'a',
    hash: 'h',
    prefix: 'p',
    mode: 'test',
    tier: 'free',
    name: null,
    createdAt: 'x',
    revokedAt: null,
  });
  assert.notEqual(await server.keysVersion(), before);
  assert.equal((await server.findKeyByHash('h'))?.id, 'k');
  await cli.close();
  await server.close();
});
