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
  {
    version: 6,
    name: "sources' own resume points (cursor)",
    sql: `ALTER TABLE sources ADD COLUMN cursor text;`,
  },
  {
    version: 7,
    name: 'history keyed by small integer ids of markets and addresses',
    sql: `
      -- As SQLite's version 7: market keys and (chain, address) pairs stored once, the history
      -- tables holding their integer ids; dimension rows are never deleted. Columns are laid
      -- out widest first (8-byte values, then 4-byte ids, then text), so no row pads for alignment.
      CREATE TABLE history_markets (
        id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        market_key text COLLATE "C" NOT NULL UNIQUE,
        chain_id bigint NOT NULL,
        protocol text COLLATE "C" NOT NULL
      );
      CREATE TABLE history_addresses (
        id integer GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
        chain_id bigint NOT NULL,
        address text COLLATE "C" NOT NULL,
        UNIQUE (chain_id, address)
      );
      INSERT INTO history_markets (market_key, chain_id, protocol)
        SELECT DISTINCT ON (market_key) market_key, chain_id, protocol
          FROM (SELECT market_key, chain_id, protocol COLLATE "C" AS protocol FROM market_snapshots
                UNION ALL SELECT market_key, chain_id, protocol FROM liquidations) k
         ORDER BY market_key;
      INSERT INTO history_addresses (chain_id, address)
        SELECT chain_id, token FROM asset_prices UNION SELECT chain_id, feed FROM oracle_rounds
         ORDER BY 1, 2;

      -- Read by market, granularity and time: the primary key. Pruning by age scans the same
      -- key once per market (market_id = ANY (ARRAY(SELECT id FROM history_markets))): no index
      -- by time alone, nor by chain (no read uses one).
      CREATE TABLE market_snapshots_v7 (
        at bigint NOT NULL,
        supply_usd double precision NOT NULL,
        borrow_usd double precision NOT NULL,
        utilization double precision NOT NULL,
        supply_apy double precision NOT NULL,
        borrow_apy double precision NOT NULL,
        collateral_price_usd double precision,
        loan_price_usd double precision,
        oracle_price double precision,
        -- NULL: the market's (history_markets)
        chain_id bigint,
        market_id integer NOT NULL,
        granularity text COLLATE "C" NOT NULL CHECK (granularity IN ('hour', 'day')),
        protocol text COLLATE "C",
        CONSTRAINT market_snapshots_v7_pkey PRIMARY KEY (market_id, granularity, at)
      );
      INSERT INTO market_snapshots_v7 (market_id, granularity, at, supply_usd, borrow_usd, utilization,
          supply_apy, borrow_apy, collateral_price_usd, loan_price_usd, oracle_price, chain_id, protocol)
        SELECT m.id, s.granularity, s.at, s.supply_usd, s.borrow_usd, s.utilization, s.supply_apy,
               s.borrow_apy, s.collateral_price_usd, s.loan_price_usd, s.oracle_price,
               NULLIF(s.chain_id, m.chain_id), NULLIF(s.protocol COLLATE "C", m.protocol)
          FROM market_snapshots s JOIN history_markets m ON m.market_key = s.market_key
         ORDER BY m.id, s.granularity, s.at;
      DROP TABLE market_snapshots;
      ALTER TABLE market_snapshots_v7 RENAME TO market_snapshots;
      ALTER TABLE market_snapshots RENAME CONSTRAINT market_snapshots_v7_pkey TO market_snapshots_pkey;

      CREATE TABLE asset_prices_v7 (
        at bigint NOT NULL,
        price_usd double precision NOT NULL,
        token_id integer NOT NULL,
        CONSTRAINT asset_prices_v7_pkey PRIMARY KEY (token_id, at)
      );
      INSERT INTO asset_prices_v7 (token_id, at, price_usd)
        SELECT a.id, p.at, p.price_usd
          FROM asset_prices p JOIN history_addresses a ON a.chain_id = p.chain_id AND a.address = p.token
         ORDER BY a.id, p.at;
      DROP TABLE asset_prices;
      ALTER TABLE asset_prices_v7 RENAME TO asset_prices;
      ALTER TABLE asset_prices RENAME CONSTRAINT asset_prices_v7_pkey TO asset_prices_pkey;

      CREATE TABLE oracle_rounds_v7 (
        answer double precision NOT NULL,
        updated_at bigint NOT NULL,
        feed_id integer NOT NULL,
        round_id text COLLATE "C" NOT NULL,
        CONSTRAINT oracle_rounds_v7_pkey PRIMARY KEY (feed_id, round_id)
      );
      INSERT INTO oracle_rounds_v7 (feed_id, round_id, answer, updated_at)
        SELECT a.id, r.round_id, r.answer, r.updated_at
          FROM oracle_rounds r JOIN history_addresses a ON a.chain_id = r.chain_id AND a.address = r.feed
         ORDER BY a.id, r.round_id;
      DROP TABLE oracle_rounds;
      ALTER TABLE oracle_rounds_v7 RENAME TO oracle_rounds;
      ALTER TABLE oracle_rounds RENAME CONSTRAINT oracle_rounds_v7_pkey TO oracle_rounds_pkey;
      -- read by feed and time; pruned by scanning each feed
      CREATE INDEX oracle_rounds_time ON oracle_rounds(feed_id, updated_at, round_id);

      -- Each index is (filter, at DESC) only: the rows of one time (the logs of one block) are put
      -- in the tie-break order (chain_id, tx_hash, log_index) by an incremental sort of that
      -- group alone, which keeps the indexes far smaller than with the tie-break in them.
      CREATE TABLE liquidations_v7 (
        block bigint NOT NULL,
        at bigint NOT NULL,
        chain_id bigint NOT NULL,
        collateral_seized double precision NOT NULL,
        collateral_seized_usd double precision NOT NULL,
        debt_repaid double precision NOT NULL,
        debt_repaid_usd double precision NOT NULL,
        bad_debt double precision NOT NULL,
        bad_debt_usd double precision NOT NULL,
        log_index integer NOT NULL,
        market_id integer NOT NULL,
        tx_hash text COLLATE "C" NOT NULL,
        protocol text COLLATE "C" NOT NULL,
        borrower text COLLATE "C" NOT NULL,
        liquidator text COLLATE "C" NOT NULL,
        CONSTRAINT liquidations_v7_pkey PRIMARY KEY (chain_id, tx_hash, log_index)
      );
      INSERT INTO liquidations_v7 (chain_id, tx_hash, log_index, protocol, block, at, market_id, borrower,
          liquidator, collateral_seized, collateral_seized_usd, debt_repaid, debt_repaid_usd, bad_debt, bad_debt_usd)
        SELECT l.chain_id, l.tx_hash, l.log_index, l.protocol, l.block, l.at, m.id, l.borrower, l.liquidator,
               l.collateral_seized, l.collateral_seized_usd, l.debt_repaid, l.debt_repaid_usd, l.bad_debt,
               l.bad_debt_usd
          FROM liquidations l JOIN history_markets m ON m.market_key = l.market_key
         ORDER BY l.at, l.chain_id, l.tx_hash, l.log_index;
      DROP TABLE liquidations;
      ALTER TABLE liquidations_v7 RENAME TO liquidations;
      ALTER TABLE liquidations RENAME CONSTRAINT liquidations_v7_pkey TO liquidations_pkey;
      CREATE INDEX liquidations_at ON liquidations(at DESC);
      CREATE INDEX liquidations_chain ON liquidations(chain_id, at DESC);
      CREATE INDEX liquidations_market ON liquidations(market_id, at DESC);
      CREATE INDEX liquidations_borrower ON liquidations(borrower, at DESC);
      CREATE INDEX liquidations_liquidator ON liquidations(liquidator, at DESC);
      -- statistics for the planner now, not at the next autovacuum
      ANALYZE history_markets, history_addresses, market_snapshots, asset_prices, oracle_rounds, liquidations;
    `,
  },
  {
    version: 8,
    name: 'idempotency keys of self-service writes',
    sql: `
      -- As SQLite's (version 8): id a digest of the key and its scope, response sealed, token
      -- the holder of an unanswered claim (NULL once answered), times in epoch ms.
      CREATE TABLE idempotency_keys (
        id text PRIMARY KEY,
        fingerprint text NOT NULL,
        token text,
        locked_until bigint NOT NULL,
        status integer,
        response text,
        created_at bigint NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
  {
    version: 9,
    name: "positions changed one by one by their sources, over the dataset's blocks",
    sql: `
      -- As SQLite's (version 9): each row replaces the block row of its (market, user) or adds
      -- a position; seq orders the change feed; dataset.change_seq is the last one written.
      CREATE TABLE position_changes (
        market_key text NOT NULL,
        "user" text NOT NULL,
        source text NOT NULL,
        seq bigint NOT NULL UNIQUE,
        collateral_usd float8 NOT NULL,
        borrow_usd float8 NOT NULL,
        supply_usd float8 NOT NULL,
        health_factor float8 NOT NULL,
        PRIMARY KEY (market_key, "user")
      );
      ALTER TABLE dataset ADD COLUMN change_seq bigint NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "markets changed one by one by their sources, over the dataset's records",
    sql: `
      -- As SQLite's (version 10): the market's record as its source now sees it, replacing the
      -- dataset's; seq shares the change feed's sequence with position_changes.
      CREATE TABLE market_changes (
        market_key text PRIMARY KEY,
        source text NOT NULL,
        seq bigint NOT NULL UNIQUE,
        doc text NOT NULL
      );
    `,
  },
  {
    version: 11,
    name: "the dataset's vaults",
    sql: `
      -- As SQLite's (version 11): written and replaced with the dataset.
      CREATE TABLE vaults (
        ord integer PRIMARY KEY,
        chain_id bigint NOT NULL,
        address text NOT NULL,
        doc text NOT NULL
      );
    `,
  },
  {
    version: 12,
    name: 'rating changes of markets and vaults (append-only)',
    sql: `
      -- As SQLite's (version 12). subject in byte order (COLLATE "C"), as SQLite compares it;
      -- components is text, not jsonb, so its key order and numbers round-trip as written.
      CREATE TABLE rating_changes (
        kind text NOT NULL CHECK (kind IN ('market', 'vault')),
        subject text COLLATE "C" NOT NULL,
        at bigint NOT NULL,
        chain_id bigint NOT NULL,
        methodology text NOT NULL,
        grade text NOT NULL,
        score double precision NOT NULL,
        previous_grade text,
        previous_score double precision,
        components text NOT NULL,
        PRIMARY KEY (kind, subject, at)
      );
    `,
  },
  {
    version: 13,
    name: 'research reports; rating changes by time',
    sql: `
      -- As SQLite's (version 13). id and protocol in byte order (COLLATE "C"), as SQLite compares them.
      CREATE TABLE research_reports (
        id text COLLATE "C" PRIMARY KEY,
        day bigint NOT NULL,
        protocol text COLLATE "C" NOT NULL,
        generated_at bigint NOT NULL,
        body text NOT NULL
      );
      CREATE INDEX research_reports_day ON research_reports(day DESC, id DESC);
      CREATE INDEX rating_changes_at ON rating_changes(at);
    `,
  },
  {
    version: 14,
    name: "chain sources' head (their lag in /health)",
    sql: `ALTER TABLE sources ADD COLUMN head text;`,
  },
  {
    version: 15,
    name: 'the ingestion lease',
    sql: `CREATE TABLE ingest_lease (id integer PRIMARY KEY CHECK (id = 1), holder text NOT NULL, expires_at bigint NOT NULL);`,
  },
  {
    version: 16,
    name: 'liquidations of markets without a USD price (their USD amounts unknown)',
    sql: `ALTER TABLE liquidations ALTER COLUMN collateral_seized_usd DROP NOT NULL,
            ALTER COLUMN debt_repaid_usd DROP NOT NULL, ALTER COLUMN bad_debt_usd DROP NOT NULL;`,
  },
  {
    version: 17,
    name: 'risk events: subscriptions, the event log, webhook deliveries, the matching lease',
    sql: `
      CREATE TABLE event_subscriptions (
        id text COLLATE "C" PRIMARY KEY,
        account_id text COLLATE "C" NOT NULL,
        mode text NOT NULL,
        kind text NOT NULL,
        url text,
        events text NOT NULL,
        filters text NOT NULL,
        secret text,
        created_at bigint NOT NULL,
        expires_at bigint,
        deleted_at bigint,
        changed bigint NOT NULL
      );
      CREATE INDEX event_subscriptions_account ON event_subscriptions(account_id, kind, created_at);
      CREATE TABLE events (
        seq bigserial PRIMARY KEY,
        id text COLLATE "C" NOT NULL UNIQUE,
        mode text NOT NULL,
        type text NOT NULL,
        created_at bigint NOT NULL,
        body text NOT NULL,
        chain_id bigint,
        protocol text,
        market_key text,
        wallet text,
        threshold double precision,
        webhook_id text
      );
      CREATE INDEX events_created ON events(created_at);
      CREATE TABLE event_deliveries (
        id text COLLATE "C" PRIMARY KEY,
        webhook_id text COLLATE "C" NOT NULL,
        event_id text COLLATE "C" NOT NULL,
        event_type text NOT NULL,
        created_at bigint NOT NULL,
        status text NOT NULL,
        attempts integer NOT NULL DEFAULT 0,
        last_status integer,
        last_error text,
        next_attempt_at bigint,
        delivered_at bigint,
        lease_token text,
        lease_until bigint NOT NULL DEFAULT 0
      );
      CREATE INDEX event_deliveries_due ON event_deliveries(status, next_attempt_at);
      CREATE INDEX event_deliveries_webhook ON event_deliveries(webhook_id, created_at DESC, id DESC);
      CREATE INDEX event_deliveries_event ON event_deliveries(event_id);
      CREATE TABLE event_lease (id integer PRIMARY KEY CHECK (id = 1), holder text NOT NULL, expires_at bigint NOT NULL);
      INSERT INTO counters (name, value) VALUES ('subscriptions_version', 0);
    `,
  },
  {
    version: 18,
    name: 'rating changes into and out of NR (not graded): score nullable, the reason',
    sql: `ALTER TABLE rating_changes ALTER COLUMN score DROP NOT NULL, ADD COLUMN reason text;`,
  },
  {
    version: 19,
    name: 'event stream slots: the open streams of a key, counted across servers',
    sql: `
      -- One row per open event stream of a key with a stream limit (src/events/stream.ts), held
      -- while the stream is open and renewed while it lives; a server that dies leaves rows that
      -- expire. Counted per key when a stream opens.
      CREATE TABLE stream_slots (
        id text COLLATE "C" PRIMARY KEY,
        key_id text COLLATE "C" NOT NULL,
        expires_at bigint NOT NULL
      );
      CREATE INDEX stream_slots_key ON stream_slots(key_id, expires_at);
    `,
  },
  {
    version: 20,
    name: "vaults changed one by one by their sources, over the dataset's records",
    sql: `
      -- As SQLite's (version 21): the vault's record as its source now sees it, replacing the
      -- dataset's; seq shares the change feed's sequence with market_changes and position_changes.
      CREATE TABLE vault_changes (
        chain_id bigint NOT NULL,
        address text NOT NULL,
        source text NOT NULL,
        seq bigint NOT NULL UNIQUE,
        doc text NOT NULL,
        PRIMARY KEY (chain_id, address)
      );
      CREATE INDEX vaults_address ON vaults(chain_id, address);
    `,
  },
  {
    version: 21,
    name: "chain sources' syncs under way (their progress in /health, answers' syncing)",
    sql: `ALTER TABLE sources ADD COLUMN sync text;`,
  },
];
