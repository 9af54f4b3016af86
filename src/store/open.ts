import { join } from 'node:path';
import type { Settings } from '../config.ts';
import type { Clock } from '../domain/clock.ts';
import { PostgresStore } from './postgres/postgres-store.ts';
import { SqliteStore } from './sqlite/sqlite-store.ts';
import type { Store } from './types.ts';

/**
 * The store the settings ask for (docs/decisions.md "Settings"): PostgreSQL when `databaseUrl` is set, else
 * the embedded SQLite file `<dataDir>/lrds.db`. Migrated before it is returned; closed again
 * if migrating fails.
 */
export async function openStore(
  settings: Pick<Settings, 'dataDir' | 'databaseUrl'>,
  clock?: Clock,
): Promise<Store> {
  const options = clock ? { clock } : {};
  const store: Store = settings.databaseUrl
    ? new PostgresStore(settings.databaseUrl, options)
    : new SqliteStore(join(settings.dataDir, 'lrds.db'), options);
  try {
    await store.migrate();
  } catch (err) {
    await store.close().catch(() => {});
    throw err;
  }
  return store;
}
