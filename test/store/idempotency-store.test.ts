import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { after } from 'node:test';
import postgres from 'postgres';
import { PostgresStore } from '../../src/store/postgres/postgres-store.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { idempotencyContract } from '../contract/idempotency-contract.ts';
import { tempDir } from '../helpers.ts';
import { PG_URL, pgSkipReason, TestSchemas } from '../pg-helpers.ts';

idempotencyContract(
  'sqlite',
  async () => {
    const store = new SqliteStore(join(tempDir('lrds-idem-'), 'lrds.db'));
    await store.migrate();
    return store;
  },
  {
    async countRecords(store) {
      const db = new DatabaseSync((store as SqliteStore).path);
      try {
        return (db.prepare('SELECT count(*) AS n FROM idempotency_keys').get() as { n: number }).n;
      } finally {
        db.close();
      }
    },
  },
);

const pgSkip = await pgSkipReason();
const schemas = new TestSchemas();
const schemaOf = new WeakMap<object, string>();
const admin = pgSkip ? null : postgres(PG_URL, { max: 1, onnotice: () => {} });
after(async () => {
  await admin?.end({ timeout: 5 });
  await schemas.drop();
});

idempotencyContract(
  'postgres',
  async () => {
    const { schema, url } = await schemas.create();
    const store = new PostgresStore(url, { poolSize: 4 });
    schemaOf.set(store, schema);
    await store.migrate();
    return store;
  },
  {
    async countRecords(store) {
      const [row] = await admin!.unsafe(
        `SELECT count(*)::int AS n FROM ${schemaOf.get(store)}.idempotency_keys`,
      );
      return row!.n as number;
    },
  },
  pgSkip ? { skip: pgSkip } : {},
);
