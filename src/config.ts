import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { DEFAULT_RATING_SIZE_FLOOR_USD } from './domain/rating.ts';

/** Service settings (docs/decisions.md "Settings"), read once from the environment, validated, then frozen. */
export interface Settings {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | null;
  redisUrl: string | null;
  tiersFile: string;
  logLevel: string;
  /**
   * Instances sharing one Redis (all hosts, all workers). Only used while Redis is unreachable:
   * each instance then admits its share, floor(rate / instances), so the total never exceeds the rate.
   * Null: the number of workers of this process.
   */
  instances: number | null;
  /**
   * How often the sandbox simulation moves prices while the server runs, ms, a divisor of a
   * minute; 0 stops it (the snapshot stays as seeded). From SIMULATION_TICK_MS, default 5000. Omitted: 0.
   */
  simulationTickMs?: number;
  /** Port of the Prometheus metrics server (GET /metrics), off the public API; null: none. */
  metricsPort?: number | null;
  /**
   * Address the metrics server binds, from METRICS_HOST: default 127.0.0.1 (this machine only),
   * whatever HOST is. Omitted: 127.0.0.1.
   */
  metricsHost?: string;
  /** From METRICS_TOKEN: when set, GET /metrics needs `Authorization: Bearer <token>`. Omitted: null. */
  metricsToken?: string | null;
  /**
   * Days of history the sandbox simulation writes into the store (market snapshots, prices,
   * liquidations), 0 to 365; 0: none. From SANDBOX_HISTORY_DAYS, default 365. Omitted: 0.
   */
  sandboxHistoryDays?: number;
  /**
   * Assets (USD) below which a market or vault is not graded (grade NR). From
   * RATING_SIZE_FLOOR_USD, default 100000. Omitted: 100000.
   */
  ratingSizeFloorUsd?: number;
  /**
   * Days back the sandbox history's hourly rows (market snapshots, token prices, oracle rounds)
   * are backfilled, 0 to 365. From SANDBOX_HOURLY_HISTORY_DAYS, default 30. Omitted: 30.
   */
  sandboxHourlyHistoryDays?: number;
  /**
   * How long history is kept, in days; null keeps everything. From HISTORY_RETENTION_DAYS,
   * default unset (keep everything). Omitted: null.
   */
  historyRetentionDays?: number | null;
  /**
   * The sources file (docs/decisions.md "Real sources"): real chains to read. From SOURCES_FILE; null (the default): the
   * sandbox is served to every key. Omitted: null.
   */
  sourcesFile?: string | null;
  /** Pause between two ingestion passes, ms (`lrds ingest`, `lrds serve` with sources). From INGEST_INTERVAL_MS, default 12000. */
  ingestIntervalMs?: number;
  /**
   * How long a start waits for the sources' first pass, ms; a pass still running then goes on
   * in the background while the service serves. From FIRST_PASS_WAIT_MS, default 30000.
   */
  firstPassWaitMs?: number;
  /**
   * Requests without an API key each client address may send per second (0 turns the budget
   * off), and at once after a pause. From ANON_RATE_PER_SECOND (default 5) and ANON_BURST
   * (default 30). Omitted: the defaults.
   */
  anonymousRatePerSecond?: number;
  anonymousBurst?: number;
  /**
   * The proxies whose X-Forwarded-For names the client's address (the address the anonymous
   * budget is kept by): from TRUST_PROXY, `true` (any), a number of hops, or a comma-separated
   * list of addresses and CIDR ranges. Omitted or unset: none (the socket's address).
   */
  trustProxy?: boolean | number | string;
  /**
   * Webhooks may use `http` and private, loopback and link-local addresses (development and
   * tests). From WEBHOOK_ALLOW_PRIVATE=true, default false. Omitted: false.
   */
  webhookAllowPrivate?: boolean;
  /**
   * The key sealing webhook secrets in the store: 64 hex digits or 32 bytes in base64. From
   * WEBHOOK_SECRETS_KEY; null (the default): a key file in DATA_DIR, made on first start.
   */
  webhookSecretsKey?: string | null;
  /** Days delivered events are kept (streams replay from them), 1 or more. From EVENT_RETENTION_DAYS, default 7. */
  eventRetentionDays?: number;
}

/** The key sealing webhook secrets as given in WEBHOOK_SECRETS_KEY: 64 hex digits or 32 bytes in base64. */
export function parseSecretsKey(text: string): Buffer | null {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return Buffer.from(t, 'hex');
  const b = Buffer.from(t, 'base64');
  return b.length === 32 ? b : null;
}

/** How long a start waits for the sources' first pass when FIRST_PASS_WAIT_MS is not set, ms. */
export const DEFAULT_FIRST_PASS_WAIT_MS = 30_000;

/** Pause between two ingestion passes when INGEST_INTERVAL_MS is not set, ms. */
export const DEFAULT_INGEST_INTERVAL_MS = 12_000;

/** The ingestion interval of settings (built without one: the default). */
export function ingestInterval(settings: Pick<Settings, 'ingestIntervalMs'>): number {
  return settings.ingestIntervalMs ?? DEFAULT_INGEST_INTERVAL_MS;
}

/** How long the ingestion lease lasts: three intervals, at least 30 s (renewed during a pass). */
export function ingestLeaseMs(settings: Pick<Settings, 'ingestIntervalMs'>): number {
  return Math.max(30_000, 3 * ingestInterval(settings));
}

export class SettingsError extends Error {
  override name = 'SettingsError';
}

/** A DNS host name (letters, digits, hyphens; dot-separated labels). */
const HOSTNAME =
  /^(?=.{1,253}$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$/i;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const PROJECT_ROOT = resolve(import.meta.dirname, '..');

/** Every problem is reported at once, in one message. */
export function loadSettings(env: NodeJS.ProcessEnv = process.env): Readonly<Settings> {
  const problems: string[] = [];
  const port = Number(env.PORT ?? 8080);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    problems.push(`PORT: must be an integer 0-65535, got '${env.PORT}'`);
  const logLevel = env.LOG_LEVEL ?? 'info';
  if (!LOG_LEVELS.includes(logLevel))
    problems.push(`LOG_LEVEL: must be one of ${LOG_LEVELS.join(', ')}, got '${logLevel}'`);
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl))
    problems.push('DATABASE_URL: must be a postgres:// URL');
  const redisUrl = env.REDIS_URL || null;
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl))
    problems.push('REDIS_URL: must be a redis:// or rediss:// URL');
  const instances = env.INSTANCES ? Number(env.INSTANCES) : null;
  if (instances !== null && !(Number.isInteger(instances) && instances >= 1)) {
    problems.push(`INSTANCES: must be a positive integer, got '${env.INSTANCES}'`);
  }
  const tickText = env.SIMULATION_TICK_MS?.trim();
  const simulationTickMs = tickText === undefined || tickText === '' ? 5000 : Number(tickText);
  // A divisor of a minute: oracle rounds fall on whole minutes, so every round is applied at
  // its own instant (with a tick that does not divide a minute, a feed would be served older
  // than its heartbeat until the next tick, and flagged stale when it is not).
  const tickOk =
    Number.isInteger(simulationTickMs) &&
    (simulationTickMs === 0 || (simulationTickMs >= 100 && 60_000 % simulationTickMs === 0));
  if (!tickOk) {
    problems.push(
      `SIMULATION_TICK_MS: must be 0 (stopped) or an integer from 100 to 60000 that divides 60000, got '${env.SIMULATION_TICK_MS}'`,
    );
  }
  const metricsText = env.METRICS_PORT?.trim();
  const metricsPort = metricsText ? Number(metricsText) : null;
  if (metricsPort !== null && !(Number.isInteger(metricsPort) && metricsPort >= 1 && metricsPort <= 65535)) {
    problems.push(`METRICS_PORT: must be an integer 1-65535, got '${env.METRICS_PORT}'`);
  }
  const metricsHost = env.METRICS_HOST?.trim() || '127.0.0.1';
  if (!isIP(metricsHost) && !HOSTNAME.test(metricsHost)) {
    problems.push(`METRICS_HOST: must be an IP address or a host name, got '${env.METRICS_HOST}'`);
  }
  const metricsToken = env.METRICS_TOKEN === undefined || env.METRICS_TOKEN === '' ? null : env.METRICS_TOKEN;
  if (metricsToken !== null && !/^[\x21-\x7e]{16,256}$/.test(metricsToken)) {
    problems.push('METRICS_TOKEN: must be 16 to 256 printable characters without spaces');
  }
  if (metricsPort === null && (env.METRICS_HOST || metricsToken !== null)) {
    problems.push('METRICS_HOST and METRICS_TOKEN need METRICS_PORT (the metrics server is off without it)');
  }
  const daysText = env.SANDBOX_HISTORY_DAYS?.trim();
  const sandboxHistoryDays = daysText ? Number(daysText) : 365;
  if (!(Number.isInteger(sandboxHistoryDays) && sandboxHistoryDays >= 0 && sandboxHistoryDays <= 365)) {
    problems.push(`SANDBOX_HISTORY_DAYS: must be an integer 0-365, got '${env.SANDBOX_HISTORY_DAYS}'`);
  }
  const floorText = env.RATING_SIZE_FLOOR_USD?.trim();
  const ratingSizeFloorUsd = floorText ? Number(floorText) : DEFAULT_RATING_SIZE_FLOOR_USD;
  if (!(Number.isFinite(ratingSizeFloorUsd) && ratingSizeFloorUsd > 0)) {
    problems.push(
      `RATING_SIZE_FLOOR_USD: must be a positive number of USD, got '${env.RATING_SIZE_FLOOR_USD}'`,
    );
  }
  const hourlyText = env.SANDBOX_HOURLY_HISTORY_DAYS?.trim();
  const sandboxHourlyHistoryDays = hourlyText ? Number(hourlyText) : 30;
  if (
    !(
      Number.isInteger(sandboxHourlyHistoryDays) &&
      sandboxHourlyHistoryDays >= 0 &&
      sandboxHourlyHistoryDays <= 365
    )
  ) {
    problems.push(
      `SANDBOX_HOURLY_HISTORY_DAYS: must be an integer 0-365, got '${env.SANDBOX_HOURLY_HISTORY_DAYS}'`,
    );
  }
  const retentionText = env.HISTORY_RETENTION_DAYS?.trim();
  const historyRetentionDays = retentionText ? Number(retentionText) : null;
  if (
    historyRetentionDays !== null &&
    !(Number.isInteger(historyRetentionDays) && historyRetentionDays >= 1)
  ) {
    problems.push(
      `HISTORY_RETENTION_DAYS: must be a positive integer (days), got '${env.HISTORY_RETENTION_DAYS}'`,
    );
  }
  const intervalText = env.INGEST_INTERVAL_MS?.trim();
  const ingestIntervalMs = intervalText ? Number(intervalText) : DEFAULT_INGEST_INTERVAL_MS;
  if (!(Number.isInteger(ingestIntervalMs) && ingestIntervalMs >= 100 && ingestIntervalMs <= 3_600_000)) {
    problems.push(`INGEST_INTERVAL_MS: must be an integer 100-3600000 (ms), got '${env.INGEST_INTERVAL_MS}'`);
  }
  const firstWaitText = env.FIRST_PASS_WAIT_MS?.trim();
  const firstPassWaitMs = firstWaitText ? Number(firstWaitText) : DEFAULT_FIRST_PASS_WAIT_MS;
  if (!(Number.isInteger(firstPassWaitMs) && firstPassWaitMs >= 0 && firstPassWaitMs <= 86_400_000)) {
    problems.push(`FIRST_PASS_WAIT_MS: must be an integer 0-86400000 (ms), got '${env.FIRST_PASS_WAIT_MS}'`);
  }
  const anonRateText = env.ANON_RATE_PER_SECOND?.trim();
  const anonymousRatePerSecond = anonRateText ? Number(anonRateText) : 5;
  if (
    !(
      Number.isFinite(anonymousRatePerSecond) &&
      anonymousRatePerSecond >= 0 &&
      anonymousRatePerSecond <= 100_000
    )
  ) {
    problems.push(
      `ANON_RATE_PER_SECOND: must be a number 0-100000 (0: no limit), got '${env.ANON_RATE_PER_SECOND}'`,
    );
  }
  const anonBurstText = env.ANON_BURST?.trim();
  const anonymousBurst = anonBurstText ? Number(anonBurstText) : 30;
  if (!(Number.isInteger(anonymousBurst) && anonymousBurst >= 1 && anonymousBurst <= 100_000)) {
    problems.push(`ANON_BURST: must be an integer 1-100000, got '${env.ANON_BURST}'`);
  }
  const trustText = env.TRUST_PROXY?.trim() ?? '';
  const trustProxy =
    trustText === '' || trustText === 'false'
      ? false
      : trustText === 'true'
        ? true
        : /^[0-9]{1,2}$/.test(trustText)
          ? Number(trustText)
          : trustText;
  if (typeof trustProxy === 'string' && !/^[0-9a-fA-F.:/]+(\s*,\s*[0-9a-fA-F.:/]+)*$/.test(trustProxy)) {
    problems.push(
      `TRUST_PROXY: must be true, a number of hops, or a comma-separated list of addresses or CIDR ranges, got '${env.TRUST_PROXY}'`,
    );
  }
  const allowText = env.WEBHOOK_ALLOW_PRIVATE?.trim() ?? '';
  if (!['', 'true', 'false'].includes(allowText))
    problems.push(`WEBHOOK_ALLOW_PRIVATE: must be true or false, got '${env.WEBHOOK_ALLOW_PRIVATE}'`);
  const eventDaysText = env.EVENT_RETENTION_DAYS?.trim();
  const eventRetentionDays = eventDaysText ? Number(eventDaysText) : 7;
  if (!(Number.isInteger(eventRetentionDays) && eventRetentionDays >= 1))
    problems.push(
      `EVENT_RETENTION_DAYS: must be a positive integer (days), got '${env.EVENT_RETENTION_DAYS}'`,
    );
  const webhookSecretsKey = env.WEBHOOK_SECRETS_KEY?.trim() || null;
  if (webhookSecretsKey !== null && !parseSecretsKey(webhookSecretsKey))
    problems.push('WEBHOOK_SECRETS_KEY: must be 64 hex digits or 32 bytes in base64');
  if (problems.length > 0) throw new SettingsError(`Invalid settings:\n  - ${problems.join('\n  - ')}`);
  return Object.freeze({
    port,
    host: env.HOST || '0.0.0.0',
    dataDir: resolve(env.DATA_DIR || 'data'),
    databaseUrl,
    redisUrl,
    tiersFile: resolve(env.TIERS_FILE || resolve(PROJECT_ROOT, 'config/tiers.json')),
    logLevel,
    instances,
    simulationTickMs,
    metricsPort,
    metricsHost,
    metricsToken,
    sandboxHistoryDays,
    ratingSizeFloorUsd,
    sandboxHourlyHistoryDays,
    historyRetentionDays,
    sourcesFile: env.SOURCES_FILE ? resolve(env.SOURCES_FILE) : null,
    ingestIntervalMs,
    firstPassWaitMs,
    anonymousRatePerSecond,
    anonymousBurst,
    trustProxy,
    webhookAllowPrivate: allowText === 'true',
    webhookSecretsKey,
    eventRetentionDays,
  });
}
