import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { accountPoolOf } from '../../src/domain/accounts.ts';
import type { Protocol } from '../../src/domain/enums.ts';
import { DEFAULT_SEED, generateSandbox } from '../../src/ingest/sandbox/index.ts';
import { createService, type Service } from '../../src/service.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, QUIET, TIERS_FILE, tempDir } from '../helpers.ts';

/**
 * One health factor per account, over the whole default sandbox as a first start seeds it, after
 * the simulation has moved prices (so a pooled account's positions, in different tokens, no
 * longer agree pair by pair): every position of an account (Aave and Spark per pool, Compound per
 * comet, Euler per controller vault and sub-account) shows the same health factor, equal to the
 * protocol's formula on the served figures, sum(collateralUsd x lltv) / sum(borrowAssetsUsd) of
 * the account, with leverage and distance from the account's totals; and a position listed at
 * risk belongs to an account whose health factor is below the threshold.
 */

interface Served {
  protocol: Protocol;
  chainId: number;
  user: { address: string };
  healthFactor: number | null;
  state: { collateralUsd: number; borrowAssetsUsd: number; supplyAssetsUsd: number };
  market: { uniqueKey: string; lltv: number };
  leverage: number | null;
  distanceToLiq: number | null;
}

let service: Service;
let key: string;
const clock = new ManualClock('2026-11-20T06:00:00.000Z');

async function get(url: string) {
  const res = await service.app.inject({ url: `/api/v1${url}`, headers: { authorization: `Bearer ${key}` } });
  assert.equal(res.statusCode, 200, `${url}: ${res.body}`);
  return res.json();
}

/** Every position served for `address` (all pages). */
async function positionsOf(address: string): Promise<Served[]> {
  const out: Served[] = [];
  let cursor: string | undefined;
  do {
    const page = await get(`/positions?address=${address}&limit=500${cursor ? `&cursor=${cursor}` : ''}`);
    out.push(...page.data);
    cursor = page.meta.nextCursor;
  } while (cursor);
  return out;
}

/** The account a served position belongs to; null for an isolated one. */
function accountKey(p: Served): string | null {
  const pool = accountPoolOf(p.protocol, p.market.uniqueKey);
  return pool === null ? null : `${p.protocol}-${p.chainId}-${pool}|${p.user.address}`;
}

/**
 * The protocol's formula on the served figures, with the bounds the served rounding allows
 * (USD to the cent: each amount within half a cent).
 */
function formula(legs: readonly Served[]) {
  let w = 0;
  let c = 0;
  let d = 0;
  let wSlack = 0;
  for (const p of legs) {
    w += p.state.collateralUsd * p.market.lltv;
    c += p.state.collateralUsd;
    d += p.state.borrowAssetsUsd;
    wSlack += 0.005 * p.market.lltv;
  }
  const dSlack = 0.005 * legs.length;
  return {
    hf: w / d,
    low: Math.max(0, w - wSlack) / (d + dSlack),
    high: (w + wSlack) / Math.max(1e-12, d - dSlack),
    collateral: c,
    debt: d,
  };
}

/** The served health factor's own rounding (significant digits). */
const within = (x: number, low: number, high: number) => x >= low * (1 - 1e-6) && x <= high * (1 + 1e-6);

describe('consistency: one health factor per account (default sandbox)', () => {
  const accounts = new Map<string, Served[]>();
  const byPosition = new Map<string, Served>();

  before(async () => {
    const dir = tempDir('lrds-consistency-accounts-');
    // The shipped tiers with a rate this walk over every wallet does not reach.
    const tiers = JSON.parse(readFileSync(TIERS_FILE, 'utf8'));
    for (const t of Object.values(tiers.tiers) as { ratePerSecond: number }[]) t.ratePerSecond = 1_000_000;
    const tiersFile = join(dir, 'tiers.json');
    writeFileSync(tiersFile, JSON.stringify(tiers));
    service = await createService(
      { ...embeddedSettings(dir), tiersFile, simulationTickMs: 0 },
      { clock, server: QUIET },
    );
    const account = await service.keys.ensureAccount('analyst');
    ({ key } = await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' }));
    // The market three weeks after the snapshot: prices moved token by token.
    assert.equal(await service.models.tickSimulation(clock.now()), 1);
    // Every wallet of the dataset (Euler sub-accounts come with their owner group).
    const ds = generateSandbox({ profile: 'default', seed: DEFAULT_SEED });
    const wallets = new Set<string>();
    for (const p of ds.positions()) wallets.add(p.user);
    // And every wallet at risk now (the running market opens positions of wallets of its own).
    for (let cursor: string | undefined, n = 0; n < 1000; n++) {
      const page = await get(
        `/risk/positions-at-risk?healthFactorThreshold=1.5&limit=200${cursor ? `&cursor=${cursor}` : ''}`,
      );
      for (const p of page.data as Served[]) wallets.add(p.user.address);
      cursor = page.meta.nextCursor;
      if (!cursor) break;
    }
    for (const w of wallets) {
      for (const p of await positionsOf(w)) {
        byPosition.set(`${p.market.uniqueKey}|${p.user.address}`, p);
      }
    }
    for (const p of byPosition.values()) {
      const k = accountKey(p);
      if (k === null) continue;
      const list = accounts.get(k);
      if (list) list.push(p);
      else accounts.set(k, [p]);
    }
  });
  after(async () => {
    await service?.close();
  });

  test('behavior: every position of an account shows one health factor, the formula on its served figures', () => {
    let checked = 0;
    let multi = 0;
    const protocols = new Set<string>();
    for (const [k, legs] of accounts) {
      const withDebt = legs.filter((p) => p.state.borrowAssetsUsd > 0);
      if (withDebt.length === 0) continue;
      const f = formula(legs);
      if (!(f.debt > 0.05 * legs.length)) continue; // dust: the cents decide
      const shown = new Set(legs.map((p) => p.healthFactor));
      assert.equal(shown.size, 1, `${k}: ${[...shown].join(', ')}`);
      const hf = legs[0]!.healthFactor!;
      assert.ok(within(hf, f.low, f.high), `${k}: served ${hf}, formula ${f.hf} [${f.low}, ${f.high}]`);
      for (const p of legs) {
        assert.ok(
          Math.abs(p.distanceToLiq! - (1 - 1 / hf)) <= 1e-4 + 1e-6 / hf,
          `${k}: distance ${p.distanceToLiq}`,
        );
        const lev = f.collateral > f.debt ? f.collateral / (f.collateral - f.debt) : null;
        if (lev === null || lev > 1e4) continue; // near zero equity the cents decide
        assert.ok(
          p.leverage !== null && Math.abs(p.leverage / lev - 1) < 1e-3,
          `${k}: leverage ${p.leverage} vs ${lev}`,
        );
      }
      checked++;
      if (legs.length > 1) multi++;
      protocols.add(legs[0]!.protocol);
    }
    assert.ok(checked > 5_000, `accounts checked: ${checked}`);
    assert.ok(multi > 500, `accounts of several positions: ${multi}`);
    assert.deepEqual([...protocols].sort(), ['aave', 'compound', 'euler', 'spark']);
  });

  test('behavior: a position listed at risk belongs to an account below the threshold', async () => {
    for (const threshold of [1, 1.1, 1.5]) {
      const listed: Served[] = (
        await get(`/risk/positions-at-risk?healthFactorThreshold=${threshold}&limit=200`)
      ).data;
      assert.ok(listed.length > 0);
      for (const p of listed) {
        assert.ok(p.healthFactor! < threshold);
        const k = accountKey(p);
        if (k === null) continue;
        const legs = accounts.get(k);
        assert.ok(legs, `${k} listed at risk is an account of the dataset`);
        const f = formula(legs);
        assert.ok(f.low < threshold * (1 + 1e-6), `${k}: account ${f.hf} listed below ${threshold}`);
        assert.equal(
          p.healthFactor,
          legs[0]!.healthFactor,
          `${k}: the listed health factor is the account's`,
        );
      }
    }
  });

  test('behavior: a wallet’s portfolio shows each position with its account’s health factor', async () => {
    // The wallets of the accounts with most positions.
    const biggest = [...accounts.values()].sort((a, b) => b.length - a.length).slice(0, 20);
    for (const legs of biggest) {
      const owner = legs[0]!.user.address;
      const folio = (await get(`/portfolios/${owner}`)).data;
      for (const p of folio.positions as Served[]) {
        const k = accountKey(p);
        if (k === null || !accounts.has(k)) continue;
        assert.equal(p.healthFactor, accounts.get(k)![0]!.healthFactor, k);
      }
    }
  });
});
