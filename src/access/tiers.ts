/**
 * Tier table (README "Tiers"; docs/decisions.md "Tiers and categories"): read from config/tiers.json, or the
 * file named by TIERS_FILE, validated once at start-up, then frozen and passed down.
 *
 * File shape (null = unlimited, for quotas, result cap and history; `chains: null` = all chains):
 *
 *   { "tiers": { "free": { "name": "Free", "ratePerSecond": 5, "dailyQuota": 1000,
 *       "monthlyQuota": 10000, "resultCap": 100, "categories": ["core", ...],
 *       "chains": [1], "historyDays": 30, "maxKeysPerAccount": 2, "keyCreationsPerDay": 5 },
 *     "pro": {...}, "enterprise": {...} } }
 *
 * `maxKeysPerAccount` and `keyCreationsPerDay` may be left out (defaults below): they bound what
 * self-service (`POST /client/api-keys`) can do, since accounting is per key.
 *
 * `ratePerSecond` may NOT be null: the sliding-window limiter keeps the last `rate` admitted
 * timestamps of a key, so it needs a finite bound. A tier meant to be "unlimited" gets a
 * high rate instead, which also keeps one key from starving the service.
 */

import { readFileSync } from 'node:fs';

/** Endpoint categories (docs/decisions.md "Tiers and categories"), in documented order. `/client/*` and health belong to none. */
export const CATEGORIES = [
  'core',
  'position',
  'portfolio',
  'risk',
  'analytics',
  'research',
  'ratings',
  'agent',
] as const;
export type Category = (typeof CATEGORIES)[number];

export const TIER_IDS = ['free', 'pro', 'enterprise'] as const;
export type TierId = (typeof TIER_IDS)[number];

export interface Tier {
  /** The tier's key in the file: 'free', 'pro' or 'enterprise'. */
  readonly id: TierId;
  /** Display name ("Free"). */
  readonly name: string;
  /** Sliding-window rate: admitted requests per 1,000 ms, per key. */
  readonly ratePerSecond: number;
  /** Requests per UTC day; null = unlimited. */
  readonly dailyQuota: number | null;
  /** Requests per UTC calendar month; null = unlimited. */
  readonly monthlyQuota: number | null;
  /** Largest `limit` the tier may request ("Clamping" (docs/decisions.md): min with the route maximum); null = no tier cap. */
  readonly resultCap: number | null;
  /** Endpoint categories the tier may call. */
  readonly categories: readonly Category[];
  /** Chain ids the tier may use; null = every chain. */
  readonly chains: readonly number[] | null;
  /** How far back `startDate` may reach, in days; null = unlimited. */
  readonly historyDays: number | null;
  /** Active keys of this tier one account may hold when it creates keys itself; null = unlimited. */
  readonly maxKeysPerAccount: number | null;
  /** Keys one account may create itself in any 24 hours (revoked ones included); null = unlimited. */
  readonly keyCreationsPerDay: number | null;
  /** Webhooks one account may hold per mode (live, test); null = unlimited, 0 = none. */
  readonly maxWebhooksPerAccount: number | null;
  /** Event streams (`GET /events/stream`) one key may hold open at once; null = unlimited, 0 = none. */
  readonly maxStreamsPerKey: number | null;
}

/** Used when a tier file leaves the self-service caps out. */
export const KEY_CAP_DEFAULTS = { maxKeysPerAccount: 10, keyCreationsPerDay: 20 } as const;
/** Used when a tier file leaves the event caps out. */
export const EVENT_CAP_DEFAULTS = { maxWebhooksPerAccount: 10, maxStreamsPerKey: 2 } as const;

export type TierTable = Readonly<Record<TierId, Tier>>;

/** The tier file is unreadable or invalid. `problems` lists every problem, one per entry. */
export class TierConfigError extends Error {
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(`${source}: invalid tier configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'TierConfigError';
    this.problems = Object.freeze([...problems]);
  }
}

const TIER_FIELDS = [
  'name',
  'ratePerSecond',
  'dailyQuota',
  'monthlyQuota',
  'resultCap',
  'categories',
  'chains',
  'historyDays',
  'maxKeysPerAccount',
  'keyCreationsPerDay',
  'maxWebhooksPerAccount',
  'maxStreamsPerKey',
] as const;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isPositiveInteger(v: unknown): v is number {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0;
}

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (typeof v === 'string') return `got "${v}"`;
  return `got ${JSON.stringify(v)}`;
}

/** Validates one tier; pushes problems; returns the tier when it has none. */
function parseTier(id: TierId, raw: unknown, problems: string[]): Tier | null {
  const path = `tiers.${id}`;
  if (!isRecord(raw)) {
    problems.push(`${path}: must be an object, ${describe(raw)}`);
    return null;
  }
  const before = problems.length;
  for (const field of Object.keys(raw)) {
    if (!(TIER_FIELDS as readonly string[]).includes(field)) problems.push(`${path}.${field}: unknown field`);
  }

  const { name, ratePerSecond, dailyQuota, monthlyQuota, resultCap, categories, chains, historyDays } = raw;
  const maxKeysPerAccount =
    raw['maxKeysPerAccount'] === undefined ? KEY_CAP_DEFAULTS.maxKeysPerAccount : raw['maxKeysPerAccount'];
  const keyCreationsPerDay =
    raw['keyCreationsPerDay'] === undefined ? KEY_CAP_DEFAULTS.keyCreationsPerDay : raw['keyCreationsPerDay'];
  const eventCaps: Record<string, unknown> = {
    maxWebhooksPerAccount:
      raw['maxWebhooksPerAccount'] === undefined
        ? EVENT_CAP_DEFAULTS.maxWebhooksPerAccount
        : raw['maxWebhooksPerAccount'],
    maxStreamsPerKey:
      raw['maxStreamsPerKey'] === undefined ? EVENT_CAP_DEFAULTS.maxStreamsPerKey : raw['maxStreamsPerKey'],
  };
  for (const [field, v] of Object.entries(eventCaps)) {
    if (v !== null && !(typeof v === 'number' && Number.isSafeInteger(v) && v >= 0)) {
      problems.push(`${path}.${field}: must be an integer >= 0 or null, ${describe(v)}`);
    }
  }
  if (typeof name !== 'string' || name.trim() === '') {
    problems.push(`${path}.name: must be a non-empty string, ${describe(name)}`);
  }
  if (!isPositiveInteger(ratePerSecond)) {
    problems.push(
      `${path}.ratePerSecond: must be a positive integer (null is not allowed), ${describe(ratePerSecond)}`,
    );
  }
  const nullable = {
    dailyQuota,
    monthlyQuota,
    resultCap,
    historyDays,
    maxKeysPerAccount,
    keyCreationsPerDay,
  };
  for (const [field, v] of Object.entries(nullable)) {
    if (v !== null && !isPositiveInteger(v)) {
      problems.push(`${path}.${field}: must be a positive integer or null, ${describe(v)}`);
    }
  }

  if (!Array.isArray(categories)) {
    problems.push(`${path}.categories: must be an array of categories, ${describe(categories)}`);
  } else {
    categories.forEach((c: unknown, i) => {
      if (typeof c !== 'string' || !(CATEGORIES as readonly string[]).includes(c)) {
        problems.push(`${path}.categories[${i}]: must be one of ${CATEGORIES.join(', ')}, ${describe(c)}`);
      } else if (categories.indexOf(c) !== i) {
        problems.push(`${path}.categories[${i}]: duplicate "${c}"`);
      }
    });
  }

  if (chains !== null) {
    if (!Array.isArray(chains) || chains.length === 0) {
      problems.push(
        `${path}.chains: must be a non-empty array of chain ids, or null for all chains, ${describe(chains)}`,
      );
    } else {
      chains.forEach((c: unknown, i) => {
        if (!isPositiveInteger(c)) {
          problems.push(`${path}.chains[${i}]: must be a positive integer chain id, ${describe(c)}`);
        } else if (chains.indexOf(c) !== i) {
          problems.push(`${path}.chains[${i}]: duplicate ${c}`);
        }
      });
    }
  }

  if (problems.length !== before) return null;
  return Object.freeze({
    id,
    name: name as string,
    ratePerSecond: ratePerSecond as number,
    dailyQuota: dailyQuota as number | null,
    monthlyQuota: monthlyQuota as number | null,
    resultCap: resultCap as number | null,
    categories: Object.freeze([...(categories as Category[])]),
    chains: chains === null ? null : Object.freeze([...(chains as number[])]),
    historyDays: historyDays as number | null,
    maxKeysPerAccount: maxKeysPerAccount as number | null,
    keyCreationsPerDay: keyCreationsPerDay as number | null,
    maxWebhooksPerAccount: eventCaps['maxWebhooksPerAccount'] as number | null,
    maxStreamsPerKey: eventCaps['maxStreamsPerKey'] as number | null,
  });
}

/**
 * Validates a parsed tier file. Throws ONE TierConfigError listing every problem found,
 * each as `path: problem`, prefixed by `source` (the file name). Returns a deeply frozen table.
 */
export function parseTiers(json: unknown, source: string): TierTable {
  const problems: string[] = [];
  if (!isRecord(json)) throw new TierConfigError(source, [`(root): must be an object, ${describe(json)}`]);
  for (const field of Object.keys(json)) {
    if (field !== 'tiers') problems.push(`${field}: unknown field`);
  }
  const tiers = json['tiers'];
  if (!isRecord(tiers)) {
    problems.push(`tiers: must be an object with ${TIER_IDS.join(', ')}, ${describe(tiers)}`);
    throw new TierConfigError(source, problems);
  }
  for (const id of Object.keys(tiers)) {
    if (!(TIER_IDS as readonly string[]).includes(id)) {
      problems.push(`tiers.${id}: unknown tier (expected ${TIER_IDS.join(', ')})`);
    }
  }
  const table: Partial<Record<TierId, Tier>> = {};
  for (const id of TIER_IDS) {
    const tier = parseTier(id, tiers[id], problems);
    if (tier !== null) table[id] = tier;
  }
  if (problems.length > 0) throw new TierConfigError(source, problems);
  return Object.freeze(table as Record<TierId, Tier>);
}

/** Reads and validates a tier file (config/tiers.json or TIERS_FILE). Throws TierConfigError. */
export function loadTiers(path: string): TierTable {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new TierConfigError(path, [`cannot read file: ${(err as Error).message}`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new TierConfigError(path, [`not valid JSON: ${(err as Error).message}`]);
  }
  return parseTiers(json, path);
}

export function tierAllowsCategory(tier: Tier, category: Category): boolean {
  return tier.categories.includes(category);
}

export function tierAllowsChain(tier: Tier, chainId: number): boolean {
  return tier.chains === null || tier.chains.includes(chainId);
}

/** The chain ids the tier may use, in the order given ("Clamping" (docs/decisions.md) clamp; may come out empty). */
export function filterChains(tier: Tier, chainIds: readonly number[]): number[] {
  const allowed = tier.chains;
  return allowed === null ? [...chainIds] : chainIds.filter((id) => allowed.includes(id));
}
