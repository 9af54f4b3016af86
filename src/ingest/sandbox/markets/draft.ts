/**
 * A market as the per-protocol builders produce it: the facts taken from the reference data
 * (tokens, addresses, LLTV, oracle, vault) and the rate model, before the synthetic numbers
 * (prices, balances, APYs, rewards) are added by economics.ts.
 */
import type { Protocol } from '../../../domain/enums.ts';
import type { RateCurve } from '../../../domain/rates.ts';
import type { OracleRecord } from '../../../domain/types.ts';
import type { OracleFactory } from '../oracles.ts';
import type { ReferenceData } from '../reference.ts';
import { hash32 } from '../rng.ts';
import type { TokenRef, TokenRegistry } from '../tokens.ts';

export interface MarketDraft {
  protocol: Protocol;
  chainId: number;
  /** The protocol's market id (docs/decisions.md "Market identity"): lowercase, [0-9a-z_] only. */
  identifier: string;
  label: string | null;
  collateral: TokenRef;
  loan: TokenRef;
  /** In (0, 1). */
  lltv: number;
  vault: { symbol: string; address: string; governor: string } | null;
  /** Built on demand (only for markets that make it into the dataset). */
  oracle: () => OracleRecord | null;
  /** Borrow curve; null: the loan family's default curve. */
  curve: RateCurve | null;
  /**
   * Morpho's adaptive curve: the rate at target at the snapshot (`curve` is the curve at it);
   * from the snapshot on the simulation adapts it (simulation/adaptive-irm.ts). Absent for fixed curves.
   */
  rateAtTarget?: number;
  /** Protocol cut of interest, 0 to 1; null: the loan family's default. */
  reserveFactor: number | null;
  /**
   * What a liquidator gets over the debt it repays, as a fraction of it (0.05 = 5 %), from the
   * reference data where it has it; null: the protocol's default (economics.ts marketTerms).
   */
  liquidationBonus: number | null;
  /** Multiplier of the protocol's median market size. */
  sizeScale: number;
  /** Probability that the market is empty (nothing supplied). */
  emptyChance: number;
}

/** What every builder gets. */
export interface BuildContext {
  seed: number;
  ref: ReferenceData;
  tokens: TokenRegistry;
  oracles: OracleFactory;
}

/** Candidates of one protocol: `primary` go into every profile, `extended` only into large ones. */
export interface DraftLists {
  primary: MarketDraft[];
  extended: MarketDraft[];
}

const IDENTIFIER = /^[0-9a-z_]+$/;

/** docs/decisions.md "Market identity": `<protocol>-<chainId>-<identifier>`, all lowercase. */
export function uniqueKeyOf(draft: Pick<MarketDraft, 'protocol' | 'chainId' | 'identifier'>): string {
  return `${draft.protocol}-${draft.chainId}-${draft.identifier}`;
}

/** True when an identifier fits "Market identity" (docs/decisions.md)'s charset (callers skip the record otherwise). */
export function isValidIdentifier(identifier: string): boolean {
  return IDENTIFIER.test(identifier);
}

/** `COLLATERAL / LOAN`, the Morpho-style pair label. */
export function pairLabel(collateral: TokenRef, loan: TokenRef): string {
  return `${collateral.symbol} / ${loan.symbol}`;
}

/** A uniform number in [0, 1) from a key alone (structure choices that must not depend on the seed). */
export function structuralUnit(key: string): number {
  return hash32(key) / 4294967296;
}

/** Orders drafts by a hash of their key: a stable, unbiased order for truncation. */
export function hashOrder(drafts: MarketDraft[]): MarketDraft[] {
  return drafts
    .map((d) => ({ d, h: hash32(uniqueKeyOf(d)) }))
    .sort((a, b) => a.h - b.h || (uniqueKeyOf(a.d) < uniqueKeyOf(b.d) ? -1 : 1))
    .map((x) => x.d);
}
