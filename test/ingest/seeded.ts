import { join } from 'node:path';
import { after } from 'node:test';
import { DEFAULT_SEED } from '../../src/ingest/sandbox/index.ts';
import { seedStore } from '../../src/service.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { tempDir } from '../helpers.ts';

/**
 * Stores seeded with the default sandbox, one file each in a folder of the calling test file,
 * closed after its tests.
 */
export function seededStores(prefix: string): (name: string) => Promise<SqliteStore> {
  const dir = tempDir(prefix);
  const stores: SqliteStore[] = [];
  after(async () => {
    for (const s of stores) await s.close();
  });
  return async (name) => {
    const store = new SqliteStore(join(dir, `${name}.db`));
    await store.migrate();
    stores.push(store);
    await seedStore(store, 'default', DEFAULT_SEED);
    return store;
  };
}
