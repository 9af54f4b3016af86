/**
 * The deterministic sandbox dataset: real tokens, markets, oracles and feeds from reference/
 * (see reference/SOURCES.md) with synthetic prices, balances, rates, oracle clocks and
 * positions drawn from a seeded PRNG. Same profile and seed give byte-identical output.
 */
import { PROTOCOLS, type Protocol } from '../../domain/enums.ts';
import type { PositionRecord, PricedMarketRecord, VaultRecord } from '../../domain/types.ts';
import { finalizeMarket, type MarketTerms, marketTerms } from './economics.ts';
import { compoundDrafts } from './markets/compound.ts';
import {
  type BuildContext,
  type DraftLists,
  hashOrder,
  isValidIdentifier,
  type MarketDraft,
  uniqueKeyOf,
} from './markets/draft.ts';
import { eulerDrafts } from './markets/euler.ts';
import { fluidDrafts } from './markets/fluid.ts';
import { morphoDrafts, syntheticMorphoDrafts } from './markets/morpho.ts';
import { aaveDrafts, sparkDrafts } from './markets/pooled.ts';
import { OracleFactory } from './oracles.ts';
import { iteratePositions, planPositions } from './positions.ts';
import { PriceBook } from './prices.ts';
import { loadReference } from './reference.ts';
import { TokenRegistry } from './tokens.ts';
import { sandboxVaults } from './vaults.ts';

export type SandboxProfile = 'default' | 'large';

/** Exact sizes of each profile. */
export const SANDBOX_PROFILES: Readonly<Record<SandboxProfile, { markets: number; positions: number }>> =
  Object.freeze({
    default: Object.freeze({ markets: 4_000, positions: 50_000 }),
    large: Object.freeze({ markets: 20_000, positions: 1_000_000 }),
  });

export const DEFAULT_SEED = 42;

/** The dataset's "now": 2026-11-01T00:00:00Z in unix seconds. Fixed, never the clock. */
export const SANDBOX_AS_OF = 1_793_491_200;

export interface SandboxOptions {
  profile: SandboxProfile;
  /** Unsigned 32-bit integer; default 42. */
  seed?: number;
  /** Folder with the reference JSON files; default the repository's reference/. */
  referenceDir?: string;
}

export interface SandboxDataset {
  profile: SandboxProfile;
  seed: number;
  /** Unix seconds; oracle clocks are simulated relative to it. */
  asOf: number;
  markets: PricedMarketRecord[];
  /**
   * The vaults lending into the markets, generated on first read (the simulation and the
   * liquidator, which start from the dataset at every start, never read them).
   */
  readonly vaults: VaultRecord[];
  /** Each market's rate and liquidation terms, aligned with `markets`. */
  terms: MarketTerms[];
  /** Positions per market, aligned with `markets`. */
  positionCounts: Uint32Array;
  positionCount: number;
  /** Streams the positions; every call starts over and yields the same sequence. */
  positions(): Iterable<PositionRecord>;
}

/** Takes one draft from each protocol in turn ("Enumerations" (docs/decisions.md) order) until all lists are exhausted. */
function* roundRobin(lists: readonly MarketDraft[][]): Generator<MarketDraft> {
  const longest = Math.max(0, ...lists.map((l) => l.length));
  for (let i = 0; i < longest; i++) {
    for (const list of lists) {
      const d = list[i];
      if (d) yield d;
    }
  }
}

/**
 * Candidate markets in the order they are taken: the primary markets of every protocol
 * (interleaved, each protocol's list in hash order), then the extended pairs (large profile),
 * then synthetic Morpho-style markets, endlessly.
 */
function* candidates(ctx: BuildContext): Generator<MarketDraft> {
  const byProtocol: Record<Protocol, (c: BuildContext) => DraftLists> = {
    morpho: morphoDrafts,
    aave: aaveDrafts,
    spark: sparkDrafts,
    compound: compoundDrafts,
    euler: eulerDrafts,
    fluid: fluidDrafts,
  };
  const lists = PROTOCOLS.map((p) => byProtocol[p](ctx));
  yield* roundRobin(lists.map((l) => hashOrder(l.primary)));
  yield* roundRobin(lists.map((l) => hashOrder(l.extended)));
  yield* syntheticMorphoDrafts(ctx);
}

/**
 * The datasets generated last, by profile, seed and reference folder: the seed, the test keys'
 * model, the simulation and the liquidator all start from the same dataset, and generating
 * it takes a few hundred ms of CPU (seconds for `large`). A dataset is never modified.
 */
const generated = new Map<string, SandboxDataset>();
const GENERATED_KEPT = 2;

export function generateSandbox(opts: SandboxOptions): SandboxDataset {
  const key = `${opts.profile}|${opts.seed ?? DEFAULT_SEED}|${opts.referenceDir ?? ''}`;
  const hit = generated.get(key);
  if (hit) return hit;
  const ds = buildSandbox(opts);
  generated.set(key, ds);
  if (generated.size > GENERATED_KEPT) {
    const oldest = generated.keys().next();
    if (!oldest.done) generated.delete(oldest.value);
  }
  return ds;
}

/** Generates the dataset afresh (generateSandbox keeps the last ones). */
export function buildSandbox(opts: SandboxOptions): SandboxDataset {
  const sizes = SANDBOX_PROFILES[opts.profile];
  if (!sizes) throw new RangeError(`unknown sandbox profile: ${String(opts.profile)}`);
  const seed = opts.seed ?? DEFAULT_SEED;
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff) {
    throw new RangeError(`seed must be an unsigned 32-bit integer, got ${seed}`);
  }
  const ref = loadReference(opts.referenceDir);
  const ctx: BuildContext = {
    seed,
    ref,
    tokens: new TokenRegistry(ref),
    oracles: new OracleFactory(ref, seed, SANDBOX_AS_OF),
  };
  const prices = new PriceBook(seed, SANDBOX_AS_OF * 1000);

  const markets: PricedMarketRecord[] = [];
  const terms: MarketTerms[] = [];
  const seen = new Set<string>();
  for (const draft of candidates(ctx)) {
    if (markets.length >= sizes.markets) break;
    const key = uniqueKeyOf(draft);
    if (seen.has(key) || !isValidIdentifier(draft.identifier)) continue;
    seen.add(key);
    markets.push(finalizeMarket(draft, seed, prices, SANDBOX_AS_OF * 1000));
    terms.push(marketTerms(draft));
  }

  const plan = planPositions(seed, markets, sizes.positions);
  let vaults: VaultRecord[] | null = null;
  return {
    profile: opts.profile,
    seed,
    asOf: SANDBOX_AS_OF,
    markets,
    get vaults() {
      vaults ??= sandboxVaults(ref, markets, seed, opts.profile);
      return vaults;
    },
    terms,
    positionCounts: plan.counts,
    positionCount: plan.total,
    *positions() {
      yield* iteratePositions(plan);
    },
  };
}
