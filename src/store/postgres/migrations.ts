import type { Migration } from '../sqlite/migrations.ts';

/**
 * Versioned schema of the PostgreSQL store: the tables and columns of SQLITE_MIGRATIONS in
 * PostgreSQL dialect. Append new versions; never edit an applied one. Each migration runs in
 * its own transaction under an advisory lock and is recorded in schema_migrations.
 *
 * Differences from SQLite, on purpose:
 * - USD amounts and health factors are `double precision`; a debt-free position stores
 *   'Infinity' (SQLite stores 1e308 and maps it back).
 * - Epoch milliseconds, seeds (unsigned 32-bit), chain ids and counters are `bigint`.
 * - `markets.doc` is `text` holding the record's JSON, not `jsonb`: nothing queries inside it,
 *   it round-trips byte for byte (jsonb reorders keys and reformats numbers), and it costs
 *   the server no parsing on load.
 * - Timestamps of accounts and keys stay `text` (ISO 8601 strings, as given), so they
 *   round-trip exactly. Text that is ordered or range-compared (key ids and creation times,
 *   usage days and endpoints) is `COLLATE "C"`: byte order, as in SQLite, whatever the
 *   database's locale.
 * - Positions (since version 2) are column blocks in `bytea`, as SQLite's BLOBs: see
 *   src/store/position-blocks.ts.
 */
export const POSTGRES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE dataset (
        id integer PRIMARY KEY CHECK (id = 1),
        kind text NOT NULL,
        profile text NOT NULL,
        seed bigint,
        refreshed_at bigint NOT NULL,
        market_count integer NOT NULL,
        position_count integer NOT NULL,
        version bigint NOT NULL
      );
      CREATE TABLE markets (
        ord integer PRIMARY KEY,
        unique_key text NOT NULL UNIQUE,
        protocol text NOT NULL,
        chain_id bigint NOT NULL,
        doc text NOT NULL
      );
      CREATE TABLE positions (
        seq bigint PRIMARY KEY,
        market_ord integer NOT NULL,
        user_address text NOT NULL,
        collateral_usd double precision NOT NULL,
        borrow_usd double precision NOT NULL,
        supply_usd double precision NOT NULL,
        health_factor double precision NOT NULL
      );
      CREATE TABLE accounts (
        id text PRIMARY KEY,
        name text NOT NULL UNIQUE,
        email text,
        created_at text NOT NULL
      );
      CREATE TABLE api_keys (
        id text COLLATE "C" PRIMARY KEY,
        account_id text NOT NULL REFERENCES accounts(id),
        hash text NOT NULL UNIQUE,
        prefix text NOT NULL,
        mode text NOT NULL CHECK (mode IN ('live', 'test')),
        tier text NOT NULL,
        name text,
        created_at text COLLATE "C" NOT NULL,
        revoked_at text
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
      CREATE TABLE usage (
        key_id text NOT NULL,
        day text COLLATE "C" NOT NULL,
        endpoint text COLLATE "C" NOT NULL,
        requests bigint NOT NULL,
        monthly bigint NOT NULL,
        PRIMARY KEY (key_id, day, endpoint)
      );
      CREATE TABLE counters (
        name text PRIMARY KEY,
        value bigint NOT NULL
      );
      INSERT INTO counters (name, value) VALUES ('keys_version', 0);
    `,
  },
  {
    version: 2,
    name: 'positions stored as column blocks in risk order',
    sql: `
      DROP TABLE positions;
      CREATE TABLE position_blocks (
        block integer PRIMARY KEY,
        count integer NOT NULL,
        market_index bytea NOT NULL,
        users bytea NOT NULL,
        collateral_usd bytea NOT NULL,
        borrow_usd bytea NOT NULL,
        supply_usd bytea NOT NULL,
        health_factor bytea NOT NULL
      );
      -- the positions are gone: the dataset must be seeded again (the server does it on start)
      DELETE FROM markets;
      DELETE FROM dataset;
    `,
  },
  {
    version: 3,
    name: 'keys stamped with the keys version of their last change',
    sql: `
      -- 0: unchanged since before this migration (readers start from the current version)
      ALTER TABLE api_keys ADD COLUMN changed_in bigint NOT NULL DEFAULT 0;
      CREATE INDEX api_keys_changed ON api_keys(changed_in);
    `,
  },
  {
    version: 4,
    name: 'ids of applied usage batches, so a retried batch counts once',
    sql: `
      -- applied_at: epoch ms; ids past their retention (a day; 10 minutes embedded) are deleted
      CREATE TABLE usage_batches (
        id text COLLATE "C" PRIMARY KEY,
        applied_at bigint NOT NULL
      );
      CREATE INDEX usage_batches_applied ON usage_batches(applied_at);
    `,
  },
  {
    version: 5,
    name: 'append-only history (market snapshots, prices, oracle rounds, liquidations) and source checkpoints',
    sql: `
      -- Times are epoch ms (bigint). Each table's primary key is its natural key: appends skip
      -- rows already stored (ON CONFLICT DO NOTHING). Keys, addresses and hashes are text
      -- COLLATE "C", so rows tie-broken on them come in SQLite's (byte) order.
      CREATE TABLE market_snapshots (
        market_key text COLLATE "C" NOT NULL,
        granularity text COLLATE "C" NOT NULL CHECK (granularity IN ('hour', 'day')),
        at bigint NOT NULL,
        chain_id bigint NOT NULL,
        protocol text NOT NULL,
        supply_usd double precision NOT NULL,
        borrow_usd double precision NOT NULL,
        utilization double precision NOT NULL,
        supply_apy double precision NOT NULL,
        borrow_apy double precision NOT NULL,
        collateral_price_usd double precision,
        loan_price_usd double precision,
        oracle_price double precision,
        PRIMARY KEY (market_key, granularity, at)
      );
      CREATE INDEX market_snapshots_chain ON market_snapshots(chain_id, granularity, at);
      -- pruning by age
      CREATE INDEX market_snapshots_at ON market_snapshots(granularity, at);

      CREATE TABLE asset_prices (
        chain_id bigint NOT NULL,
        token text COLLATE "C" NOT NULL,
        at bigint NOT NULL,
        price_usd double precision NOT NULL,
        PRIMARY KEY (chain_id, token, at)
      );
      CREATE INDEX asset_prices_at ON asset_prices(at);

      CREATE TABLE oracle_rounds (
        chain_id bigint NOT NULL,
        feed text COLLATE "C" NOT NULL,
        round_id text COLLATE "C" NOT NULL,
        answer double precision NOT NULL,
        updated_at bigint NOT NULL,
        PRIMARY KEY (chain_id, feed, round_id)
      );
      CREATE INDEX oracle_rounds_time ON oracle_rounds(chain_id, feed, updated_at, round_id);
      CREATE INDEX oracle_rounds_at ON oracle_rounds(updated_at);

      -- Read newest first; each index ends with the tie-break of that order.
      CREATE TABLE liquidations (
        chain_id bigint NOT NULL,
        tx_hash text COLLATE "C" NOT NULL,
        log_index integer NOT NULL,
        protocol text COLLATE "C" NOT NULL,
        block bigint NOT NULL,
        at bigint NOT NULL,
        market_key text COLLATE "C" NOT NULL,
        borrower text COLLATE "C" NOT NULL,
        liquidator text COLLATE "C" NOT NULL,
        collateral_seized double precision NOT NULL,
        collateral_seized_usd double precision NOT NULL,
        debt_repaid double precision NOT NULL,
        debt_repaid_usd double precision NOT NULL,
        bad_debt double precision NOT NULL,
        bad_debt_usd double precision NOT NULL,
        PRIMARY KEY (chain_id, tx_hash, log_index)
      );
      CREATE INDEX liquidations_at ON liquidations(at DESC, chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_chain ON liquidations(chain_id, at DESC, tx_hash, log_index);
      CREATE INDEX liquidations_market ON liquidations(market_key, at DESC, chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_borrower ON liquidations(borrower, at DESC, chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_liquidator ON liquidations(liquidator, at DESC, chain_id, tx_hash, log_index);

      -- chain_ids and last_block: JSON text, as markets.doc (read and written whole)
      CREATE TABLE sources (
        id text COLLATE "C" PRIMARY KEY,
        kind text NOT NULL,
        chain_ids text NOT NULL,
        refreshed_at bigint,
        last_block text NOT NULL,
        consecutive_failures integer NOT NULL,
        last_error text,
        updated_at bigint NOT NULL
      );
    `,
  },
];
