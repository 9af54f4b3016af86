/**
 * Versioned schema of the embedded store. Append new versions; never edit an applied one.
 * Each migration runs in its own transaction and is recorded in schema_migrations.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const SQLITE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'initial schema',
    sql: `
      CREATE TABLE dataset (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        kind TEXT NOT NULL,
        profile TEXT NOT NULL,
        seed INTEGER,
        refreshed_at INTEGER NOT NULL,
        market_count INTEGER NOT NULL,
        position_count INTEGER NOT NULL,
        version INTEGER NOT NULL
      );
      CREATE TABLE markets (
        ord INTEGER PRIMARY KEY,
        unique_key TEXT NOT NULL UNIQUE,
        protocol TEXT NOT NULL,
        chain_id INTEGER NOT NULL,
        doc TEXT NOT NULL
      );
      CREATE TABLE positions (
        market_ord INTEGER NOT NULL,
        user_address TEXT NOT NULL,
        collateral_usd REAL NOT NULL,
        borrow_usd REAL NOT NULL,
        supply_usd REAL NOT NULL,
        health_factor REAL NOT NULL
      );
      CREATE TABLE accounts (
        id TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        email TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE api_keys (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL REFERENCES accounts(id),
        hash TEXT NOT NULL UNIQUE,
        prefix TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('live', 'test')),
        tier TEXT NOT NULL,
        name TEXT,
        created_at TEXT NOT NULL,
        revoked_at TEXT
      );
      CREATE INDEX api_keys_account ON api_keys(account_id);
      CREATE TABLE usage (
        key_id TEXT NOT NULL,
        day TEXT NOT NULL,
        endpoint TEXT NOT NULL,
        requests INTEGER NOT NULL,
        monthly INTEGER NOT NULL,
        PRIMARY KEY (key_id, day, endpoint)
      ) WITHOUT ROWID;
      CREATE TABLE counters (
        name TEXT PRIMARY KEY,
        value INTEGER NOT NULL
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
        block INTEGER PRIMARY KEY,
        count INTEGER NOT NULL,
        market_index BLOB NOT NULL,
        users BLOB NOT NULL,
        collateral_usd BLOB NOT NULL,
        borrow_usd BLOB NOT NULL,
        supply_usd BLOB NOT NULL,
        health_factor BLOB NOT NULL
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
      ALTER TABLE api_keys ADD COLUMN changed_in INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX api_keys_changed ON api_keys(changed_in);
    `,
  },
  {
    version: 4,
    name: 'ids of applied usage batches, so a retried batch counts once',
    sql: `
      -- applied_at: epoch ms; ids past their retention (a day; 10 minutes embedded) are deleted
      CREATE TABLE usage_batches (
        id TEXT PRIMARY KEY,
        applied_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX usage_batches_applied ON usage_batches(applied_at);
    `,
  },
  {
    version: 5,
    name: 'append-only history (market snapshots, prices, oracle rounds, liquidations) and source checkpoints',
    sql: `
      -- Times are epoch ms. Each table's primary key is its natural key: appends skip rows
      -- already stored (ON CONFLICT DO NOTHING). Rows are read in primary-key order, so the
      -- tables keyed by it are WITHOUT ROWID (clustered on the key).
      CREATE TABLE market_snapshots (
        market_key TEXT NOT NULL,
        granularity TEXT NOT NULL CHECK (granularity IN ('hour', 'day')),
        at INTEGER NOT NULL,
        chain_id INTEGER NOT NULL,
        protocol TEXT NOT NULL,
        supply_usd REAL NOT NULL,
        borrow_usd REAL NOT NULL,
        utilization REAL NOT NULL,
        supply_apy REAL NOT NULL,
        borrow_apy REAL NOT NULL,
        collateral_price_usd REAL,
        loan_price_usd REAL,
        oracle_price REAL,
        PRIMARY KEY (market_key, granularity, at)
      ) WITHOUT ROWID;
      CREATE INDEX market_snapshots_chain ON market_snapshots(chain_id, granularity, at);
      -- pruning by age
      CREATE INDEX market_snapshots_at ON market_snapshots(granularity, at);

      CREATE TABLE asset_prices (
        chain_id INTEGER NOT NULL,
        token TEXT NOT NULL,
        at INTEGER NOT NULL,
        price_usd REAL NOT NULL,
        PRIMARY KEY (chain_id, token, at)
      ) WITHOUT ROWID;
      CREATE INDEX asset_prices_at ON asset_prices(at);

      CREATE TABLE oracle_rounds (
        chain_id INTEGER NOT NULL,
        feed TEXT NOT NULL,
        round_id TEXT NOT NULL,
        answer REAL NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (chain_id, feed, round_id)
      ) WITHOUT ROWID;
      CREATE INDEX oracle_rounds_time ON oracle_rounds(chain_id, feed, updated_at, round_id);
      CREATE INDEX oracle_rounds_at ON oracle_rounds(updated_at);

      -- A rowid table: its five secondary indexes then point at a small rowid, not the key.
      -- Read newest first; each index ends with the tie-break of that order.
      CREATE TABLE liquidations (
        chain_id INTEGER NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        protocol TEXT NOT NULL,
        block INTEGER NOT NULL,
        at INTEGER NOT NULL,
        market_key TEXT NOT NULL,
        borrower TEXT NOT NULL,
        liquidator TEXT NOT NULL,
        collateral_seized REAL NOT NULL,
        collateral_seized_usd REAL NOT NULL,
        debt_repaid REAL NOT NULL,
        debt_repaid_usd REAL NOT NULL,
        bad_debt REAL NOT NULL,
        bad_debt_usd REAL NOT NULL,
        PRIMARY KEY (chain_id, tx_hash, log_index)
      );
      CREATE INDEX liquidations_at ON liquidations(at DESC, chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_chain ON liquidations(chain_id, at DESC, tx_hash, log_index);
      CREATE INDEX liquidations_market ON liquidations(market_key, at DESC, chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_borrower ON liquidations(borrower, at DESC, chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_liquidator ON liquidations(liquidator, at DESC, chain_id, tx_hash, log_index);

      -- chain_ids and last_block: JSON text (read and written whole, never queried inside)
      CREATE TABLE sources (
        id TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        chain_ids TEXT NOT NULL,
        refreshed_at INTEGER,
        last_block TEXT NOT NULL,
        consecutive_failures INTEGER NOT NULL,
        last_error TEXT,
        updated_at INTEGER NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 6,
    name: "sources' own resume points (cursor)",
    sql: `ALTER TABLE sources ADD COLUMN cursor TEXT;`,
  },
  {
    version: 7,
    name: 'history keyed by small integer ids of markets and addresses',
    sql: `
      -- Dimensions: a market key or a (chain, address) is stored once, and the history tables
      -- hold its integer id (1-3 bytes instead of 42-75 characters in every row and index).
      -- Their rows are never deleted (pruning deletes history, not ids), so an id, once
      -- committed, names the same market or address for the life of the database.
      -- chain_id and protocol of a market: those of a row that named it first; a snapshot that
      -- says otherwise keeps its own (market_snapshots.chain_id and protocol, else NULL).
      CREATE TABLE history_markets (
        id INTEGER PRIMARY KEY,
        market_key TEXT NOT NULL UNIQUE,
        chain_id INTEGER NOT NULL,
        protocol TEXT NOT NULL
      );
      -- Tokens (asset_prices) and price feeds (oracle_rounds): lower-case 0x addresses.
      CREATE TABLE history_addresses (
        id INTEGER PRIMARY KEY,
        chain_id INTEGER NOT NULL,
        address TEXT NOT NULL,
        UNIQUE (chain_id, address)
      );
      INSERT INTO history_markets (market_key, chain_id, protocol)
        SELECT market_key, chain_id, protocol
          FROM (SELECT market_key, chain_id, protocol FROM market_snapshots
                UNION ALL SELECT market_key, chain_id, protocol FROM liquidations)
         GROUP BY market_key ORDER BY market_key;
      INSERT INTO history_addresses (chain_id, address)
        SELECT chain_id, token FROM asset_prices UNION SELECT chain_id, feed FROM oracle_rounds
         ORDER BY 1, 2;

      -- Read by market, granularity and time: the primary key. Pruning by age seeks the same
      -- key once per market (market_id IN (SELECT id FROM history_markets)), so there is no
      -- index by time alone (it doubled the time of an append); nor by chain (no read uses one).
      CREATE TABLE market_snapshots_v7 (
        market_id INTEGER NOT NULL,
        granularity TEXT NOT NULL CHECK (granularity IN ('hour', 'day')),
        at INTEGER NOT NULL,
        supply_usd REAL NOT NULL,
        borrow_usd REAL NOT NULL,
        utilization REAL NOT NULL,
        supply_apy REAL NOT NULL,
        borrow_apy REAL NOT NULL,
        collateral_price_usd REAL,
        loan_price_usd REAL,
        oracle_price REAL,
        -- NULL: the market's (history_markets)
        chain_id INTEGER,
        protocol TEXT,
        PRIMARY KEY (market_id, granularity, at)
      ) WITHOUT ROWID;
      INSERT INTO market_snapshots_v7
        SELECT m.id, s.granularity, s.at, s.supply_usd, s.borrow_usd, s.utilization, s.supply_apy,
               s.borrow_apy, s.collateral_price_usd, s.loan_price_usd, s.oracle_price,
               NULLIF(s.chain_id, m.chain_id), NULLIF(s.protocol, m.protocol)
          FROM market_snapshots s JOIN history_markets m ON m.market_key = s.market_key
         ORDER BY m.id, s.granularity, s.at;
      DROP TABLE market_snapshots;
      ALTER TABLE market_snapshots_v7 RENAME TO market_snapshots;

      -- Read by token and time; pruned by seeking each token.
      CREATE TABLE asset_prices_v7 (
        token_id INTEGER NOT NULL,
        at INTEGER NOT NULL,
        price_usd REAL NOT NULL,
        PRIMARY KEY (token_id, at)
      ) WITHOUT ROWID;
      INSERT INTO asset_prices_v7
        SELECT a.id, p.at, p.price_usd
          FROM asset_prices p JOIN history_addresses a ON a.chain_id = p.chain_id AND a.address = p.token
         ORDER BY a.id, p.at;
      DROP TABLE asset_prices;
      ALTER TABLE asset_prices_v7 RENAME TO asset_prices;

      CREATE TABLE oracle_rounds_v7 (
        feed_id INTEGER NOT NULL,
        round_id TEXT NOT NULL,
        answer REAL NOT NULL,
        updated_at INTEGER NOT NULL,
        PRIMARY KEY (feed_id, round_id)
      ) WITHOUT ROWID;
      INSERT INTO oracle_rounds_v7
        SELECT a.id, r.round_id, r.answer, r.updated_at
          FROM oracle_rounds r JOIN history_addresses a ON a.chain_id = r.chain_id AND a.address = r.feed
         ORDER BY a.id, r.round_id;
      DROP TABLE oracle_rounds;
      ALTER TABLE oracle_rounds_v7 RENAME TO oracle_rounds;
      -- read by feed and time; pruned by seeking each feed
      CREATE INDEX oracle_rounds_time ON oracle_rounds(feed_id, updated_at, round_id);

      -- A rowid table: its indexes carry a small rowid, not the natural key. Each index is
      -- (filter, at DESC) only: the rows of one time (a few: the logs of one block) are put in
      -- the tie-break order (chain_id, tx_hash, log_index) by a sort of that group alone, which
      -- keeps the indexes about a third of the size they had with the tie-break in them.
      CREATE TABLE liquidations_v7 (
        chain_id INTEGER NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        at INTEGER NOT NULL,
        block INTEGER NOT NULL,
        market_id INTEGER NOT NULL,
        protocol TEXT NOT NULL,
        borrower TEXT NOT NULL,
        liquidator TEXT NOT NULL,
        collateral_seized REAL NOT NULL,
        collateral_seized_usd REAL NOT NULL,
        debt_repaid REAL NOT NULL,
        debt_repaid_usd REAL NOT NULL,
        bad_debt REAL NOT NULL,
        bad_debt_usd REAL NOT NULL
      );
      INSERT INTO liquidations_v7
        SELECT l.chain_id, l.tx_hash, l.log_index, l.at, l.block, m.id, l.protocol, l.borrower, l.liquidator,
               l.collateral_seized, l.collateral_seized_usd, l.debt_repaid, l.debt_repaid_usd, l.bad_debt,
               l.bad_debt_usd
          FROM liquidations l JOIN history_markets m ON m.market_key = l.market_key
         ORDER BY l.at, l.chain_id, l.tx_hash, l.log_index;
      DROP TABLE liquidations;
      ALTER TABLE liquidations_v7 RENAME TO liquidations;
      CREATE UNIQUE INDEX liquidations_key ON liquidations(chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_at ON liquidations(at DESC);
      CREATE INDEX liquidations_chain ON liquidations(chain_id, at DESC);
      CREATE INDEX liquidations_market ON liquidations(market_id, at DESC);
      CREATE INDEX liquidations_borrower ON liquidations(borrower, at DESC);
      CREATE INDEX liquidations_liquidator ON liquidations(liquidator, at DESC);
    `,
  },
  {
    version: 8,
    name: 'idempotency keys of self-service writes',
    sql: `
      -- id: a digest of the Idempotency-Key and its scope; response: the answer, sealed with a
      -- key derived from the Idempotency-Key (src/access/idempotency.ts). token: the holder of
      -- an unanswered claim, NULL once answered (status and response set). Times: epoch ms.
      CREATE TABLE idempotency_keys (
        id TEXT PRIMARY KEY,
        fingerprint TEXT NOT NULL,
        token TEXT,
        locked_until INTEGER NOT NULL,
        status INTEGER,
        response TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER NOT NULL
      ) WITHOUT ROWID;
      -- pruned by age, a few at each claim
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys(expires_at);
    `,
  },
  {
    version: 9,
    name: "positions changed one by one by their sources, over the dataset's blocks",
    sql: `
      -- A source's position updates since the dataset was written: each row replaces the block
      -- row of the same (market, user), or adds a position. seq orders the changes (the change
      -- feed read models follow); dataset.change_seq is the last one written.
      CREATE TABLE position_changes (
        market_key TEXT NOT NULL,
        user TEXT NOT NULL,
        source TEXT NOT NULL,
        seq INTEGER NOT NULL UNIQUE,
        collateral_usd REAL NOT NULL,
        borrow_usd REAL NOT NULL,
        supply_usd REAL NOT NULL,
        health_factor REAL NOT NULL,
        PRIMARY KEY (market_key, user)
      ) WITHOUT ROWID;
      ALTER TABLE dataset ADD COLUMN change_seq INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 10,
    name: "markets changed one by one by their sources, over the dataset's records",
    sql: `
      -- A source's market updates since the dataset was written: each row is the market's
      -- record as its source now sees it (JSON, as markets.doc), replacing the dataset's. seq
      -- shares the change feed's sequence with position_changes (dataset.change_seq).
      CREATE TABLE market_changes (
        market_key TEXT PRIMARY KEY,
        source TEXT NOT NULL,
        seq INTEGER NOT NULL UNIQUE,
        doc TEXT NOT NULL
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 11,
    name: "the dataset's vaults",
    sql: `
      -- Vaults lending into the dataset's markets: written and replaced with the dataset; doc
      -- is the vault's record (JSON: its allocations name markets by uniqueKey).
      CREATE TABLE vaults (
        ord INTEGER PRIMARY KEY,
        chain_id INTEGER NOT NULL,
        address TEXT NOT NULL,
        doc TEXT NOT NULL
      );
    `,
  },
  {
    version: 12,
    name: 'rating changes of markets and vaults (append-only)',
    sql: `
      -- A market's or vault's rating, recorded when it changed beyond the tolerance
      -- (src/domain/rating.ts). subject: a market uniqueKey, or a vault's '<chainId>:<address>'.
      -- at: epoch ms of the computation. components: JSON text (names to scores), as written.
      -- Read by subject and time (the primary key); the latest of every subject by the same key.
      CREATE TABLE rating_changes (
        kind TEXT NOT NULL CHECK (kind IN ('market', 'vault')),
        subject TEXT NOT NULL,
        at INTEGER NOT NULL,
        chain_id INTEGER NOT NULL,
        methodology TEXT NOT NULL,
        grade TEXT NOT NULL,
        score REAL NOT NULL,
        previous_grade TEXT,
        previous_score REAL,
        components TEXT NOT NULL,
        PRIMARY KEY (kind, subject, at)
      ) WITHOUT ROWID;
    `,
  },
  {
    version: 13,
    name: 'research reports; rating changes by time',
    sql: `
      -- One report per day and protocol (src/domain/research.ts), its body the report as JSON
      -- text. Read newest first, by protocol or not; by id.
      CREATE TABLE research_reports (
        id TEXT PRIMARY KEY,
        day INTEGER NOT NULL,
        protocol TEXT NOT NULL,
        generated_at INTEGER NOT NULL,
        body TEXT NOT NULL
      ) WITHOUT ROWID;
      CREATE INDEX research_reports_day ON research_reports(day DESC, id DESC);
      -- the rating changes of a day (the research digest)
      CREATE INDEX rating_changes_at ON rating_changes(at);
    `,
  },
  {
    version: 14,
    name: "chain sources' head (their lag in /health)",
    sql: `ALTER TABLE sources ADD COLUMN head TEXT;`,
  },
  {
    version: 15,
    name: 'the ingestion lease',
    sql: `CREATE TABLE ingest_lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, expires_at INTEGER NOT NULL);`,
  },
  {
    version: 16,
    name: 'liquidations of markets without a USD price (their USD amounts unknown)',
    sql: `
      -- SQLite cannot drop a NOT NULL: the table is written anew, rows and rowids as they were.
      CREATE TABLE liquidations_v16 (
        chain_id INTEGER NOT NULL,
        tx_hash TEXT NOT NULL,
        log_index INTEGER NOT NULL,
        at INTEGER NOT NULL,
        block INTEGER NOT NULL,
        market_id INTEGER NOT NULL,
        protocol TEXT NOT NULL,
        borrower TEXT NOT NULL,
        liquidator TEXT NOT NULL,
        collateral_seized REAL NOT NULL,
        collateral_seized_usd REAL,
        debt_repaid REAL NOT NULL,
        debt_repaid_usd REAL,
        bad_debt REAL NOT NULL,
        bad_debt_usd REAL
      );
      INSERT INTO liquidations_v16 (rowid, chain_id, tx_hash, log_index, at, block, market_id, protocol, borrower,
          liquidator, collateral_seized, collateral_seized_usd, debt_repaid, debt_repaid_usd, bad_debt, bad_debt_usd)
        SELECT rowid, chain_id, tx_hash, log_index, at, block, market_id, protocol, borrower, liquidator,
               collateral_seized, collateral_seized_usd, debt_repaid, debt_repaid_usd, bad_debt, bad_debt_usd
          FROM liquidations ORDER BY rowid;
      DROP TABLE liquidations;
      ALTER TABLE liquidations_v16 RENAME TO liquidations;
      CREATE UNIQUE INDEX liquidations_key ON liquidations(chain_id, tx_hash, log_index);
      CREATE INDEX liquidations_at ON liquidations(at DESC);
      CREATE INDEX liquidations_chain ON liquidations(chain_id, at DESC);
      CREATE INDEX liquidations_market ON liquidations(market_id, at DESC);
      CREATE INDEX liquidations_borrower ON liquidations(borrower, at DESC);
      CREATE INDEX liquidations_liquidator ON liquidations(liquidator, at DESC);
    `,
  },
  {
    version: 17,
    name: 'risk events: subscriptions, the event log, webhook deliveries, the matching lease',
    sql: `
      CREATE TABLE event_subscriptions (
        id TEXT PRIMARY KEY,
        account_id TEXT NOT NULL,
        mode TEXT NOT NULL,
        kind TEXT NOT NULL,
        url TEXT,
        events TEXT NOT NULL,
        filters TEXT NOT NULL,
        secret TEXT,
        created_at INTEGER NOT NULL,
        expires_at INTEGER,
        deleted_at INTEGER,
        changed INTEGER NOT NULL
      );
      CREATE INDEX event_subscriptions_account ON event_subscriptions(account_id, kind, created_at);
      CREATE TABLE events (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        mode TEXT NOT NULL,
        type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        body TEXT NOT NULL,
        chain_id INTEGER,
        protocol TEXT,
        market_key TEXT,
        wallet TEXT,
        threshold REAL,
        webhook_id TEXT
      );
      CREATE INDEX events_created ON events(created_at);
      CREATE TABLE event_deliveries (
        id TEXT PRIMARY KEY,
        webhook_id TEXT NOT NULL,
        event_id TEXT NOT NULL,
        event_type TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        status TEXT NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        last_status INTEGER,
        last_error TEXT,
        next_attempt_at INTEGER,
        delivered_at INTEGER,
        lease_token TEXT,
        lease_until INTEGER NOT NULL DEFAULT 0
      );
      CREATE INDEX event_deliveries_due ON event_deliveries(status, next_attempt_at);
      CREATE INDEX event_deliveries_webhook ON event_deliveries(webhook_id, created_at DESC, id DESC);
      CREATE INDEX event_deliveries_event ON event_deliveries(event_id);
      CREATE TABLE event_lease (id INTEGER PRIMARY KEY CHECK (id = 1), holder TEXT NOT NULL, expires_at INTEGER NOT NULL);
      INSERT INTO counters (name, value) VALUES ('subscriptions_version', 0);
    `,
  },
  {
    version: 18,
    name: 'rating changes into and out of NR (not graded): score nullable, the reason',
    sql: `
      -- SQLite cannot drop a NOT NULL: the table is written anew, rows as they were (graded ones:
      -- reason NULL).
      CREATE TABLE rating_changes_v18 (
        kind TEXT NOT NULL CHECK (kind IN ('market', 'vault')),
        subject TEXT NOT NULL,
        at INTEGER NOT NULL,
        chain_id INTEGER NOT NULL,
        methodology TEXT NOT NULL,
        grade TEXT NOT NULL,
        score REAL,
        reason TEXT,
        previous_grade TEXT,
        previous_score REAL,
        components TEXT NOT NULL,
        PRIMARY KEY (kind, subject, at)
      ) WITHOUT ROWID;
      INSERT INTO rating_changes_v18 (kind, subject, at, chain_id, methodology, grade, score, reason,
          previous_grade, previous_score, components)
        SELECT kind, subject, at, chain_id, methodology, grade, score, NULL, previous_grade, previous_score, components
          FROM rating_changes;
      DROP TABLE rating_changes;
      ALTER TABLE rating_changes_v18 RENAME TO rating_changes;
      CREATE INDEX rating_changes_at ON rating_changes(at);
    `,
  },
  {
    version: 19,
    name: 'event stream slots: the open streams of a key, counted across servers',
    sql: `
      -- One row per open event stream of a key with a stream limit (src/events/stream.ts), held
      -- while the stream is open and renewed while it lives; a server that dies leaves rows that
      -- expire. Counted per key when a stream opens.
      CREATE TABLE stream_slots (
        id TEXT PRIMARY KEY,
        key_id TEXT NOT NULL,
        expires_at INTEGER NOT NULL
      );
      CREATE INDEX stream_slots_key ON stream_slots(key_id, expires_at);
    `,
  },
  {
    version: 20,
    name: 'market snapshots stored compactly: figures of fixed precision as scaled integers',
    sql: `
      -- One bit per column (supply_usd, borrow_usd, utilization, supply_apy, borrow_apy) whose
      -- value is stored scaled (cents, 1e-8) because scaling back gives it exactly (see
      -- src/store/sqlite/history.ts); rows written before hold their values as they are (0).
      -- The embedded store's own encoding: PostgreSQL keeps its columns.
      ALTER TABLE market_snapshots ADD COLUMN scaled INTEGER NOT NULL DEFAULT 0;
    `,
  },
  {
    version: 21,
    name: "vaults changed one by one by their sources, over the dataset's records",
    sql: `
      -- A source's vault updates since the dataset was written: each row is the vault's record
      -- as its source now sees it (JSON, as vaults.doc), replacing the dataset's. seq shares the
      -- change feed's sequence with market_changes and position_changes (dataset.change_seq).
      CREATE TABLE vault_changes (
        chain_id INTEGER NOT NULL,
        address TEXT NOT NULL,
        source TEXT NOT NULL,
        seq INTEGER NOT NULL UNIQUE,
        doc TEXT NOT NULL,
        PRIMARY KEY (chain_id, address)
      ) WITHOUT ROWID;
      CREATE INDEX vaults_address ON vaults(chain_id, address);
    `,
  },
  {
    version: 22,
    name: "chain sources' syncs under way (their progress in /health, answers' syncing)",
    sql: `ALTER TABLE sources ADD COLUMN sync TEXT;`,
  },
];
