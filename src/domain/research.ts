/**
 * The daily risk digest: one report per UTC day and protocol, with a section per chain, built
 * from that day's stored history (daily market snapshots and the day before's, liquidations,
 * rating changes) and, for the day that just ended, from the read model at the time it is
 * written (positions at risk and stale oracles are not kept as history). Pure: every input is
 * given; the same inputs give the same report, Markdown included.
 */
import { CHAINS } from './enums.ts';

/**
 * Version of the digest's method; stored with each report. 1.1.0: liquidations whose debt has no
 * known USD value (a loan token without a USD price) are counted apart (`unpricedLiquidations`),
 * their debt left out of the sums. 1.2.0: a report states the data it rests on (`data`: simulated
 * sandbox data or market data read from its sources); highlights in plain English: counts with
 * their plural, chain names, ratios as multiples to 2 significant digits.
 */
export const DIGEST_VERSION = '1.2.0';
/** A market's utilization rising by at least this much (absolute) over the day is a spike. */
export const SPIKE_RISE = 0.1;
/** Reaching this utilization from below is a spike too. */
export const SPIKE_LEVEL = 0.95;
/** Items listed per section, largest first. */
export const SECTION_ITEMS = 10;

export interface DigestSnapshot {
  marketKey: string;
  chainId: number;
  /** 'COLLATERAL/LOAN'. */
  pair: string;
  supplyUsd: number;
  borrowUsd: number;
  utilization: number;
}

export interface DigestLiquidation {
  chainId: number;
  marketKey: string;
  txHash: string;
  at: number;
  borrower: string;
  /** Null when the token had no USD price (a market served without one). */
  debtRepaidUsd: number | null;
  collateralSeizedUsd: number | null;
  badDebtUsd: number | null;
}

export interface DigestRatingChange {
  kind: 'market' | 'vault';
  subject: string;
  chainId: number;
  grade: string;
  score: number;
  previousGrade: string | null;
  previousScore: number | null;
}

export interface DigestPositionAtRisk {
  chainId: number;
  marketKey: string;
  user: string;
  healthFactor: number;
  debtUsd: number;
}

export interface DigestStaleOracle {
  chainId: number;
  marketKey: string;
  oracle: string;
  secondsSinceUpdate: number;
  stalenessRatio: number;
}

/** The data a digest rests on: the sandbox's simulation, or market data read from the sources. */
export interface DigestData {
  kind: 'sandbox' | 'market';
  /** The sandbox's profile and seed; null for market data. */
  profile: string | null;
  seed: number | null;
}

export interface DigestInputs {
  /** The day, epoch ms at 00:00 UTC. */
  day: number;
  protocol: string;
  /** What the figures are: simulated or market data (absent: market data). */
  data?: DigestData;
  /** The protocol's markets' daily snapshots of the day, and of the day before. */
  snapshots: readonly DigestSnapshot[];
  previous: readonly DigestSnapshot[];
  /** The protocol's liquidations of the day. */
  liquidations: readonly DigestLiquidation[];
  /** Rating changes of the protocol's markets recorded during the day. */
  ratingChanges: readonly DigestRatingChange[];
  /**
   * The read model's view when the report is written right after its day (null for days written
   * later, from history alone): positions below the at-risk health factor and stale oracles.
   */
  live: {
    at: number;
    positionsAtRisk: readonly DigestPositionAtRisk[];
    staleOracles: readonly DigestStaleOracle[];
  } | null;
  /** When the report is written, epoch ms. */
  generatedAt: number;
}

export interface ChainSection {
  chainId: number;
  markets: number;
  supplyUsd: number;
  borrowUsd: number;
  utilization: number;
  /** Supply over the day before's, minus 1; null without a day before. */
  supplyChange: number | null;
  liquidations: number;
  /**
   * Liquidations whose debt repaid or bad debt has no known USD value (a loan token without a
   * price), left out of the sums (absent from reports of version 1.0.0).
   */
  unpricedLiquidations?: number;
  /** Sums of the known USD values. */
  liquidatedDebtUsd: number;
  badDebtUsd: number;
  /** Markets of the chain with a utilization spike (all of them; the list shows the largest). */
  utilizationSpikes: number;
  /** Markets of the chain with a stale oracle at liveAsOf; null for reports from history alone. */
  staleOracles: number | null;
}

export interface UtilizationSpike {
  chainId: number;
  marketId: string;
  pair: string;
  utilization: number;
  previousUtilization: number;
  change: number;
}

export interface ResearchReport {
  id: string;
  /** YYYY-MM-DD. */
  date: string;
  protocol: string;
  version: string;
  generatedAt: string;
  title: string;
  /**
   * The data it rests on, in a sentence (`kind`: `sandbox` for the simulation, `market` for data
   * read from the sources). Absent from reports before version 1.2.0.
   */
  data?: { kind: 'sandbox' | 'market'; description: string };
  /** Plain sentences, most severe first. */
  highlights: string[];
  chains: ChainSection[];
  utilizationSpikes: UtilizationSpike[];
  notableLiquidations: (Omit<DigestLiquidation, 'at' | 'marketKey'> & { marketId: string; at: string })[];
  ratingChanges: DigestRatingChange[];
  /** As of `liveAsOf`; null for reports written from history alone. */
  positionsAtRisk: (Omit<DigestPositionAtRisk, 'marketKey'> & { marketId: string })[] | null;
  staleOracles: (Omit<DigestStaleOracle, 'marketKey'> & { marketId: string })[] | null;
  liveAsOf: string | null;
}

const iso = (ms: number) => new Date(ms).toISOString();
const usdText = (x: number) =>
  `$${x.toLocaleString('en-US', { minimumFractionDigits: 0, maximumFractionDigits: 0 })}`;
/** An amount of no known USD value: a dash. */
const usdOrDash = (x: number | null) => (x === null ? '–' : usdText(x));
const pctText = (x: number) => `${(x * 100).toFixed(1)} %`;
const round2 = (x: number) => Math.round(x * 100) / 100 || 0;
const round2OrNull = (x: number | null) => (x === null ? null : round2(x));
const round8 = (x: number) => Math.round(x * 1e8) / 1e8 || 0;

/** `n` and the noun, singular for one: "1 liquidation", "4 liquidations". */
export function counted(n: number, noun: string, plural = `${noun}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : plural}`;
}

/** A chain by its name (its id when the service does not know it). */
export function chainText(chainId: number): string {
  return CHAINS[chainId] ?? `chain ${chainId}`;
}

/** A ratio as a multiple to 2 significant digits: "2.0x", "0.51x", "2,000x". */
export function multipleText(x: number): string {
  if (!Number.isFinite(x)) return `${x}x`;
  const r = Number(x.toPrecision(2));
  return `${Math.abs(r) >= 10 ? r.toLocaleString('en-US') : r.toPrecision(2)}x`;
}

/** The sentence that says what data a report rests on. */
export function dataDescription(d: DigestData | undefined): {
  kind: 'sandbox' | 'market';
  description: string;
} {
  if (d?.kind === 'sandbox')
    return {
      kind: 'sandbox',
      description:
        `Simulated sandbox data (profile ${d.profile ?? 'default'}${d.seed === null ? '' : `, seed ${d.seed}`}): ` +
        'generated markets, positions and liquidations, not market data.',
    };
  return { kind: 'market', description: "Market data read from the service's sources (chains and APIs)." };
}

export function reportId(day: number, protocol: string): string {
  return `${iso(day).slice(0, 10)}-${protocol}`;
}

/**
 * The first SECTION_ITEMS of each chain, in the list's order: what a report stores, so that a
 * report narrowed to some chains still lists their largest items (lists are cut to
 * SECTION_ITEMS overall when served: reportForChains).
 */
function perChain<T extends { chainId: number }>(sorted: readonly T[]): T[] {
  return sorted.filter(perChainFilter());
}

/** perChain as a filter callback (for a chain of array methods). */
function perChainFilter<T extends { chainId: number }>(): (x: T) => boolean {
  const taken = new Map<number, number>();
  return (x) => {
    const n = taken.get(x.chainId) ?? 0;
    taken.set(x.chainId, n + 1);
    return n < SECTION_ITEMS;
  };
}

/** The digest of one protocol's day. */
export function buildDigest(x: DigestInputs): ResearchReport {
  const date = iso(x.day).slice(0, 10);
  const prevByKey = new Map(x.previous.map((s) => [s.marketKey, s]));
  // Per chain: sums of the day and the day before, and the day's liquidations.
  const chains = new Map<number, ChainSection & { prevSupply: number; hadPrev: boolean }>();
  const chainOf = (chainId: number) => {
    let c = chains.get(chainId);
    if (!c) {
      c = {
        chainId,
        markets: 0,
        supplyUsd: 0,
        borrowUsd: 0,
        utilization: 0,
        supplyChange: null,
        liquidations: 0,
        unpricedLiquidations: 0,
        liquidatedDebtUsd: 0,
        badDebtUsd: 0,
        utilizationSpikes: 0,
        staleOracles: x.live ? 0 : null,
        prevSupply: 0,
        hadPrev: false,
      };
      chains.set(chainId, c);
    }
    return c;
  };
  for (const s of x.snapshots) {
    const c = chainOf(s.chainId);
    c.markets++;
    c.supplyUsd += s.supplyUsd;
    c.borrowUsd += s.borrowUsd;
  }
  for (const s of x.previous) {
    const c = chainOf(s.chainId);
    c.prevSupply += s.supplyUsd;
    c.hadPrev = true;
  }
  for (const l of x.liquidations) {
    const c = chainOf(l.chainId);
    c.liquidations++;
    // (The sections sum debt: a liquidation counts apart when its debt has no USD value.)
    if (l.debtRepaidUsd === null || l.badDebtUsd === null)
      c.unpricedLiquidations = (c.unpricedLiquidations ?? 0) + 1;
    c.liquidatedDebtUsd += l.debtRepaidUsd ?? 0;
    c.badDebtUsd += l.badDebtUsd ?? 0;
  }
  const spikes: UtilizationSpike[] = [];
  for (const s of x.snapshots) {
    const p = prevByKey.get(s.marketKey);
    if (!p) continue;
    const change = s.utilization - p.utilization;
    if (change >= SPIKE_RISE || (s.utilization >= SPIKE_LEVEL && p.utilization < SPIKE_LEVEL)) {
      chainOf(s.chainId).utilizationSpikes++;
      spikes.push({
        chainId: s.chainId,
        marketId: s.marketKey,
        pair: s.pair,
        utilization: round8(s.utilization),
        previousUtilization: round8(p.utilization),
        change: round8(change),
      });
    }
  }
  for (const o of x.live?.staleOracles ?? []) {
    const c = chainOf(o.chainId);
    c.staleOracles = (c.staleOracles ?? 0) + 1;
  }
  const sections: ChainSection[] = [...chains.values()]
    .filter((c) => c.markets > 0 || c.liquidations > 0 || (c.staleOracles ?? 0) > 0)
    .sort((a, b) => b.supplyUsd - a.supplyUsd || a.chainId - b.chainId)
    .map(({ prevSupply, hadPrev, ...c }) => ({
      ...c,
      supplyUsd: round2(c.supplyUsd),
      borrowUsd: round2(c.borrowUsd),
      utilization: c.supplyUsd > 0 ? round8(Math.min(1, c.borrowUsd / c.supplyUsd)) : 0,
      supplyChange: hadPrev && prevSupply > 0 ? round8(c.supplyUsd / prevSupply - 1) : null,
      liquidatedDebtUsd: round2(c.liquidatedDebtUsd),
      badDebtUsd: round2(c.badDebtUsd),
    }));

  spikes.sort((a, b) => b.change - a.change || (a.marketId < b.marketId ? -1 : 1));

  // Largest repayment first; those of no known USD value last.
  const liquidations = [...x.liquidations].sort(
    (a, b) =>
      (b.debtRepaidUsd ?? -1) - (a.debtRepaidUsd ?? -1) || a.at - b.at || (a.txHash < b.txHash ? -1 : 1),
  );
  const notable = perChain(liquidations).map(({ marketKey, at, ...l }) => ({
    ...l,
    marketId: marketKey,
    at: iso(at),
    debtRepaidUsd: round2OrNull(l.debtRepaidUsd),
    collateralSeizedUsd: round2OrNull(l.collateralSeizedUsd),
    badDebtUsd: round2OrNull(l.badDebtUsd),
  }));
  const ratingChanges = [...x.ratingChanges].sort(
    (a, b) =>
      Math.abs(b.score - (b.previousScore ?? b.score)) - Math.abs(a.score - (a.previousScore ?? a.score)) ||
      (a.subject < b.subject ? -1 : 1),
  );
  const atRisk = x.live
    ? [...x.live.positionsAtRisk]
        .sort((a, b) => b.debtUsd - a.debtUsd || a.healthFactor - b.healthFactor)
        .filter(perChainFilter())
        .map(({ marketKey, ...p }) => ({ ...p, marketId: marketKey, debtUsd: round2(p.debtUsd) }))
    : null;
  const stale = x.live
    ? [...x.live.staleOracles]
        .sort((a, b) => b.stalenessRatio - a.stalenessRatio || (a.marketKey < b.marketKey ? -1 : 1))
        .filter(perChainFilter())
        .map(({ marketKey, ...o }) => ({ ...o, marketId: marketKey }))
    : null;

  const report: ResearchReport = {
    id: reportId(x.day, x.protocol),
    date,
    protocol: x.protocol,
    version: DIGEST_VERSION,
    generatedAt: iso(x.generatedAt),
    title: `${x.protocol} daily risk digest, ${date}${x.data?.kind === 'sandbox' ? ' (sandbox)' : ''}`,
    data: dataDescription(x.data),
    highlights: [],
    chains: sections,
    utilizationSpikes: perChain(spikes),
    notableLiquidations: notable,
    ratingChanges: perChain(ratingChanges),
    positionsAtRisk: atRisk,
    staleOracles: stale,
    liveAsOf: x.live ? iso(x.live.at) : null,
  };
  report.highlights = highlightsOf(report);
  return report;
}

/**
 * The report's highlights, from its own sections (so a report narrowed to some chains gets
 * highlights of those chains only): bad debt, the largest liquidation, spikes, stale oracles,
 * positions at risk, rating downgrades; or a quiet day.
 */
export function highlightsOf(r: ResearchReport): string[] {
  const out: string[] = [];
  const bad = r.chains.reduce((s, c) => s + c.badDebtUsd, 0);
  const liquidated = r.chains.reduce((s, c) => s + c.liquidatedDebtUsd, 0);
  const count = r.chains.reduce((s, c) => s + c.liquidations, 0);
  const unpriced = r.chains.reduce((s, c) => s + (c.unpricedLiquidations ?? 0), 0);
  if (bad > 0) out.push(`Liquidations left ${usdText(bad)} of bad debt.`);
  if (count > 0) {
    const top = r.notableLiquidations[0];
    out.push(
      `${counted(count, 'liquidation')} repaid ${usdText(liquidated)} of debt` +
        (unpriced > 0 ? ` (${unpriced} of no known USD value not included)` : '') +
        (top && top.debtRepaidUsd !== null
          ? `; the largest repaid ${usdText(top.debtRepaidUsd)} on ${chainText(top.chainId)}.`
          : '.'),
    );
  }
  const spike = r.utilizationSpikes[0];
  const spikes = r.chains.reduce((n, c) => n + c.utilizationSpikes, 0);
  if (spike) {
    out.push(
      `${counted(spikes, 'market')} saw utilization spike; the largest, ${spike.pair} on ${chainText(spike.chainId)}, went from ${pctText(spike.previousUtilization)} to ${pctText(spike.utilization)}.`,
    );
  }
  const o = r.staleOracles?.[0];
  if (o) {
    const stale = r.chains.reduce((n, c) => n + (c.staleOracles ?? 0), 0);
    out.push(
      `${counted(stale, 'market')} had a stale oracle; the stalest, on ${chainText(o.chainId)}, was last updated ${multipleText(o.stalenessRatio)} its heartbeat ago.`,
    );
  }
  if (r.positionsAtRisk && r.positionsAtRisk.length > 0) {
    const debt = r.positionsAtRisk.reduce((s, p) => s + p.debtUsd, 0);
    const n = r.positionsAtRisk.length;
    out.push(
      n === 1
        ? `The largest position near liquidation owes ${usdText(debt)}.`
        : `The ${n} largest positions near liquidation owe ${usdText(debt)}.`,
    );
  }
  const downgrades = r.ratingChanges.filter(
    (c) => c.previousScore !== null && c.score < c.previousScore,
  ).length;
  if (downgrades > 0)
    out.push(`${counted(downgrades, 'rating')} ${downgrades === 1 ? 'was' : 'were'} lowered.`);
  if (out.length === 0) out.push('A quiet day: no liquidation, no utilization spike.');
  return out;
}

/** The report as served: narrowed to some chains (all when undefined), each list cut to SECTION_ITEMS, highlights of what is left. */
export function reportForChains(r: ResearchReport, chains: readonly number[] | undefined): ResearchReport {
  // Stored lists hold each chain's largest items; served, the largest SECTION_ITEMS of the chains in scope.
  const keep = <T extends { chainId: number }>(l: T[]) =>
    (chains === undefined ? l : l.filter((x) => chains.includes(x.chainId))).slice(0, SECTION_ITEMS);
  const narrowed: ResearchReport = {
    ...r,
    chains: chains === undefined ? r.chains : r.chains.filter((c) => chains.includes(c.chainId)),
    utilizationSpikes: keep(r.utilizationSpikes),
    notableLiquidations: keep(r.notableLiquidations),
    ratingChanges: keep(r.ratingChanges),
    positionsAtRisk: r.positionsAtRisk && keep(r.positionsAtRisk),
    staleOracles: r.staleOracles && keep(r.staleOracles),
  };
  narrowed.highlights = highlightsOf(narrowed);
  return narrowed;
}

/** The report as Markdown: its title, highlights, then a table per section. */
export function reportMarkdown(r: ResearchReport): string {
  const lines: string[] = [`# ${r.title}`, ''];
  if (r.data) lines.push(`_${r.data.description}_`, '');
  lines.push(...r.highlights.map((h) => `- ${h}`), '');
  const table = (title: string, head: string[], rows: string[][]) => {
    lines.push(`## ${title}`, '');
    if (rows.length === 0) {
      lines.push('None.', '');
      return;
    }
    lines.push(`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`);
    for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
    lines.push('');
  };
  table(
    'Chains',
    [
      'chain',
      'markets',
      'supply',
      'borrow',
      'utilization',
      'supply change',
      'liquidations',
      'debt liquidated',
      'bad debt',
    ],
    r.chains.map((c) => [
      chainText(c.chainId),
      String(c.markets),
      usdText(c.supplyUsd),
      usdText(c.borrowUsd),
      pctText(c.utilization),
      c.supplyChange === null ? '–' : pctText(c.supplyChange),
      String(c.liquidations),
      usdText(c.liquidatedDebtUsd),
      usdText(c.badDebtUsd),
    ]),
  );
  table(
    'Utilization spikes',
    ['chain', 'market', 'pair', 'from', 'to'],
    r.utilizationSpikes.map((s) => [
      chainText(s.chainId),
      `\`${s.marketId}\``,
      s.pair,
      pctText(s.previousUtilization),
      pctText(s.utilization),
    ]),
  );
  table(
    'Notable liquidations',
    ['chain', 'market', 'tx', 'debt repaid', 'collateral seized', 'bad debt'],
    r.notableLiquidations.map((l) => [
      chainText(l.chainId),
      `\`${l.marketId}\``,
      `\`${l.txHash}\``,
      usdOrDash(l.debtRepaidUsd),
      usdOrDash(l.collateralSeizedUsd),
      usdOrDash(l.badDebtUsd),
    ]),
  );
  table(
    'Rating changes',
    ['chain', 'subject', 'from', 'to'],
    r.ratingChanges.map((c) => [
      chainText(c.chainId),
      `\`${c.subject}\``,
      c.previousGrade === null
        ? '–'
        : c.previousScore === null
          ? c.previousGrade
          : `${c.previousGrade} (${c.previousScore})`,
      `${c.grade} (${c.score})`,
    ]),
  );
  if (r.positionsAtRisk === null || r.staleOracles === null) {
    lines.push(
      '## Positions at risk and stale oracles',
      '',
      'Not in this report: it was written from history after its day, and positions and oracle states are not kept as history.',
      '',
    );
  } else {
    table(
      `Largest positions near liquidation (as of ${r.liveAsOf})`,
      ['chain', 'market', 'wallet', 'health factor', 'debt'],
      r.positionsAtRisk.map((p) => [
        chainText(p.chainId),
        `\`${p.marketId}\``,
        `\`${p.user}\``,
        String(p.healthFactor),
        usdText(p.debtUsd),
      ]),
    );
    table(
      `Stale oracles (as of ${r.liveAsOf})`,
      ['chain', 'market', 'oracle', 'seconds since update', 'staleness ratio'],
      r.staleOracles.map((o) => [
        chainText(o.chainId),
        `\`${o.marketId}\``,
        `\`${o.oracle}\``,
        String(o.secondsSinceUpdate),
        multipleText(o.stalenessRatio),
      ]),
    );
  }
  lines.push(`_Digest method ${r.version}; generated ${r.generatedAt}._`, '');
  return lines.join('\n');
}
