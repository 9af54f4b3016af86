/**
 * Morpho Blue markets: the real markets of morpho-markets.json (id, tokens, oracle, LLTV),
 * and, for large profiles, synthetic Morpho-style markets that reuse a real market's tokens
 * and oracle under another standard LLTV, with a synthetic id.
 */
import { createHash } from 'node:crypto';
import type { OracleRecord } from '../../../domain/types.ts';
import { adaptiveCurve } from '../prices.ts';
import { rngFor } from '../rng.ts';
import type { TokenRef } from '../tokens.ts';
import type { BuildContext, DraftLists, MarketDraft } from './draft.ts';
import { pairLabel } from './draft.ts';

const ZERO_ADDRESS = '0x0000000000000000000000000000000000000000';

/** LLTVs governance has enabled on Morpho Blue (the ones found in the reference markets). */
const MORPHO_LLTVS = [0.385, 0.625, 0.77, 0.86, 0.915, 0.945, 0.965, 0.98] as const;

/** One oracle per (chain, oracle address), shared by every market that uses it. */
function morphoOracle(
  ctx: BuildContext,
  chainId: number,
  address: string,
  collateral: string,
  loan: string,
): OracleRecord | null {
  if (address === ZERO_ADDRESS) return null;
  return ctx.oracles.cached(`morpho:${chainId}:${address}`, () => {
    const route = ctx.oracles.route(chainId, collateral, loan, address);
    if (route) return ctx.oracles.build(address, route.feeds, true, route.warnings);
    return ctx.oracles.unlisted(chainId, address, collateral, loan, true);
  });
}

function draft(
  ctx: BuildContext,
  template: Omit<
    MarketDraft,
    'oracle' | 'curve' | 'reserveFactor' | 'liquidationBonus' | 'sizeScale' | 'emptyChance' | 'vault'
  >,
  oracleAddress: string,
): MarketDraft {
  const rng = rngFor(ctx.seed, `morpho-irm|${template.identifier}`);
  const { chainId, collateral, loan } = template;
  const rateAtTarget = rng.float(0.02, 0.12);
  return {
    ...template,
    vault: null,
    oracle: () => morphoOracle(ctx, chainId, oracleAddress, collateral.symbol, loan.symbol),
    curve: adaptiveCurve(rateAtTarget),
    rateAtTarget,
    reserveFactor: rng.chance(0.8) ? 0 : rng.pick([0.05, 0.1, 0.15, 0.25]),
    liquidationBonus: null,
    sizeScale: 1,
    emptyChance: 0.06,
  };
}

type RefMarket = BuildContext['ref']['morphoMarkets'][number];

/** The market's token: its own symbol, else the registry's; null when neither is usable. */
function token(ctx: BuildContext, chainId: number, address: string, symbol: string): TokenRef | null {
  if (symbol && symbol.toLowerCase() !== 'unknown') return ctx.tokens.ref(chainId, address, symbol);
  const known = ctx.tokens.byAddress(chainId, address);
  return known && known.symbol.toLowerCase() !== 'unknown' ? known : null;
}

/** The draft of one real Morpho market, or null if the record is unusable (LLTV 0, unknown token). */
function fromReference(ctx: BuildContext, m: RefMarket): MarketDraft | null {
  if (!(m.lltv > 0 && m.lltv < 1)) return null;
  const id = m.uniqueKey.toLowerCase();
  if (!/^0x[0-9a-f]{64}$/.test(id)) return null;
  const collateral = token(ctx, m.chainId, m.collateralToken, m.collateralSymbol);
  const loan = token(ctx, m.chainId, m.loanToken, m.loanSymbol);
  if (!collateral || !loan) return null;
  return draft(
    ctx,
    {
      protocol: 'morpho',
      chainId: m.chainId,
      identifier: id,
      label: pairLabel(collateral, loan),
      collateral,
      loan,
      lltv: m.lltv,
    },
    m.oracle,
  );
}

/**
 * Markets beyond this many with the same chain, tokens and LLTV are left out: the reference
 * holds hundreds of copies of one pair (720 GMORPHO/cbBTC markets on Base, each with its own
 * oracle) that would drown the real ones.
 */
const MAX_MORPHO_DUPLICATES = 3;

/** The real markets worth copying, in file order (usable records, duplicates capped). */
function usableMarkets(ctx: BuildContext): RefMarket[] {
  const seen = new Map<string, number>();
  const out: RefMarket[] = [];
  for (const m of ctx.ref.morphoMarkets) {
    const key = `${m.chainId}|${m.collateralToken}|${m.loanToken}|${m.lltv}`;
    const n = (seen.get(key) ?? 0) + 1;
    seen.set(key, n);
    if (n <= MAX_MORPHO_DUPLICATES) out.push(m);
  }
  return out;
}

export function morphoDrafts(ctx: BuildContext): DraftLists {
  const primary: MarketDraft[] = [];
  for (const m of usableMarkets(ctx)) {
    const d = fromReference(ctx, m);
    if (d) primary.push(d);
  }
  return { primary, extended: [] };
}

/**
 * An endless, deterministic supply of synthetic Morpho-style markets: market `i` copies real
 * market `i mod n` (tokens, oracle; markets without an oracle are not copied) with an LLTV
 * from MORPHO_LLTVS, and gets the id sha256(`<seed>:<i>`) as 0x + 64 hex: NOT a real Morpho id.
 */
export function* syntheticMorphoDrafts(ctx: BuildContext): Generator<MarketDraft> {
  const templates: { source: MarketDraft; oracleAddress: string }[] = [];
  for (const m of usableMarkets(ctx)) {
    if (m.oracle === ZERO_ADDRESS) continue;
    const source = fromReference(ctx, m);
    if (source) templates.push({ source, oracleAddress: m.oracle });
  }
  if (templates.length === 0) return;
  for (let i = 0; ; i++) {
    const t = templates[i % templates.length];
    if (!t) return;
    const id = `0x${createHash('sha256').update(`${ctx.seed}:${i}`).digest('hex')}`;
    const rng = rngFor(ctx.seed, `morpho-synthetic|${i}`);
    yield draft(
      ctx,
      {
        protocol: 'morpho',
        chainId: t.source.chainId,
        identifier: id,
        label: t.source.label,
        collateral: t.source.collateral,
        loan: t.source.loan,
        lltv: rng.pick(MORPHO_LLTVS),
      },
      t.oracleAddress,
    );
  }
}
