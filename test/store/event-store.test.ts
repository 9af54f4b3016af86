import { join } from 'node:path';
import { after } from 'node:test';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { eventStoreContract } from '../contract/event-store-contract.ts';
import { tempDir } from '../helpers.ts';
import { pgSkipReason, TestSchemas } from '../pg-helpers.ts';

eventStoreContract('sqlite', async () => {
  const store = new SqliteStore(join(tempDir('lrds-events-'), 'lrds.db'));
  await store.migrate();
  return store;
});

const pgSkip = await pgSkipReason();
const schemas = new TestSchemas();
after(() => schemas.drop());

eventStoreContract(
  'postgres',
  async () => {
    const { url } = await schemas.create();
    const store = new PostgresStore(url, { poolSize: 4 });
    await store.migrate();
    return store;
  },
  pgSkip ? { skip: pgSkip } : {},
);
