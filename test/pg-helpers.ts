import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import postgres from 'postgres';

/** The machine's PostgreSQL (CI runs one). */
export const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** The URL without credentials, for messages. */
function shown(url: string): string {
  const u = new URL(url);
  u.username = '';
  u.password = '';
  return u.toString();
}

/**
 * The skip reason for suites that need the machine's PostgreSQL: none when it answers. When it
 * does not, local runs skip with a message, and CI (CI=true) gets one failing test instead.
 */
export async function pgSkipReason(): Promise<string | undefined> {
  const probe = postgres(PG_URL, { max: 1, connect_timeout: 3, onnotice: () => {} });
  const reachable = await probe`SELECT 1`.then(
    () => true,
    () => false,
  );
  await probe.end({ timeout: 1 });
  if (reachable) return undefined;
  if (process.env.CI === 'true') {
    test('error: PostgreSQL must be reachable in CI', () => {
      assert.fail(`PostgreSQL not reachable at ${shown(PG_URL)}`);
    });
    return `PostgreSQL not reachable at ${shown(PG_URL)} (CI: failed)`;
  }
  return `PostgreSQL not reachable at ${shown(PG_URL)}: skipped (CI runs it)`;
}

/** Fresh schemas of one suite, dropped by `drop()`. */
export class TestSchemas {
  readonly #names: string[] = [];

  /** A fresh, empty schema; the returned URL (of `base`, default PG_URL) has it as search path. */
  async create(base: string = PG_URL): Promise<{ schema: string; url: string }> {
    const schema = `lrds_test_${randomBytes(6).toString('hex')}`;
    const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
    try {
      await admin.unsafe(`CREATE SCHEMA ${schema}`);
    } finally {
      await admin.end({ timeout: 5 });
    }
    this.#names.push(schema);
    const url = new URL(base);
    url.searchParams.set('search_path', schema);
    return { schema, url: url.toString() };
  }

  /** `url` (e.g. the proxy's) with the search path of `schema`. */
  static urlOf(url: string, schema: string): string {
    const u = new URL(url);
    u.searchParams.set('search_path', schema);
    return u.toString();
  }

  async drop(): Promise<void> {
    if (this.#names.length === 0) return;
    const admin = postgres(PG_URL, { max: 1, onnotice: () => {} });
    try {
      for (const s of this.#names.splice(0)) await admin.unsafe(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    } finally {
      await admin.end({ timeout: 5 });
    }
  }
}
