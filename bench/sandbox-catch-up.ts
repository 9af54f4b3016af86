/**
 * The figures of docs/sandbox.md "One path from the history to the live market": the `default`
 * sandbox's (seed 42) liquidations a day in its history (the 30 days before the snapshot) and in
 * the catch-up a first start makes from the snapshot to `--to` (default: now), median over the
 * whole UTC-aligned days since the snapshot, the first day, and the catch-up's last minute.
 *
 *   SANDBOX_HISTORY_DAYS=0 node bench/sandbox-catch-up.ts [--to 2026-11-28T09:00:00Z] [--json-out FILE]
 *
 * The catch-up is the server's first liquidation step (SandboxLiquidator.step over the window
 * from the snapshot), in process on a freshly seeded store, taken in one step (the server takes
 * at most 500 positions a step and goes on from the same instant, stamping the same events).
 * The history's liquidations are the simulation's own (the stored history is not needed:
 * SANDBOX_HISTORY_DAYS=0 only makes the seed shorter). Deterministic for a given `--to`.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { applyPrices, loadReadModel } from '../src/data/read-model.ts';
import { sandboxMarketClock, sandboxSimulation } from '../src/ingest/sandbox/history.ts';
import { DEFAULT_SEED, SANDBOX_AS_OF } from '../src/ingest/sandbox/index.ts';
import { SandboxLiquidator } from '../src/ingest/sandbox/liquidator.ts';
import { sandboxPricer } from '../src/ingest/sandbox/live.ts';
import { seedStore } from '../src/service.ts';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.ts';
import { fmt, log, median } from './lib.ts';

const DAY_MS = 86_400_000;
const AT = SANDBOX_AS_OF * 1000;

interface Row {
  label: string;
  days: number;
  liquidationsPerDay: number;
  debtRepaidUsdPerDay: number;
}

/** Per UTC day from `fromMs` (days of DAY_MS): counts and debt repaid (USD) of `events`. */
function perDay(events: readonly { at: number; debtRepaidUsd: number }[], fromMs: number, days: number) {
  const count = new Array<number>(days).fill(0);
  const repaid = new Array<number>(days).fill(0);
  for (const e of events) {
    const d = Math.floor((e.at - fromMs) / DAY_MS);
    if (d < 0 || d >= days) continue;
    count[d]! += 1;
    repaid[d]! += e.debtRepaidUsd;
  }
  return { count, repaid };
}

const usdM = (x: number) => `$${(x / 1e6).toFixed(1)} M`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { to: { type: 'string' }, 'json-out': { type: 'string' } } });
  const toMs = values.to ? Date.parse(values.to) : Date.now();
  if (!Number.isFinite(toMs) || toMs <= AT + DAY_MS)
    throw new Error(`--to must be a day or more after the snapshot`);
  const dir = mkdtempSync(join(tmpdir(), 'lrds-catch-up-'));
  const store = new SqliteStore(join(dir, 'lrds.db'));
  try {
    await store.migrate();
    log('seeding the default profile');
    await seedStore(store, 'default', DEFAULT_SEED);
    const model = await loadReadModel(store, AT);
    if (!model) throw new Error('no dataset after the seed');
    const sim = sandboxSimulation('default', DEFAULT_SEED);
    // Priced at `toMs` as the running server prices it (prices, markets' states, borrow index).
    const pricer = sandboxPricer(model.catalog.baseRecords(), DEFAULT_SEED);
    const clock = sandboxMarketClock(sim);
    await pricer.warm(toMs);
    await clock.warm(toMs);
    applyPrices(model, pricer.pricesAt(toMs), toMs, [], clock.statesAt(toMs));
    log(`catching up from ${new Date(AT).toISOString()} to ${new Date(toMs).toISOString()}`);
    const t0 = performance.now();
    const step = await new SandboxLiquidator(store, 'default', DEFAULT_SEED, Number.MAX_SAFE_INTEGER).step(
      model,
      toMs,
    );
    log(`${step.events.length} liquidations in ${fmt((performance.now() - t0) / 1000)} s`);
    const days = Math.floor((toMs - AT) / DAY_MS);
    const after = perDay(step.events, AT, days);
    const history: { at: number; debtRepaidUsd: number }[] = [];
    for (let i = 0; i < sim.dataset.markets.length; i++)
      history.push(...sim.history.liquidations(i, AT - 30 * DAY_MS, AT));
    const before = perDay(history, AT - 30 * DAY_MS, 30);
    const lastMinute = step.events.filter((e) => e.at > toMs - 60_000);
    const rows: Row[] = [
      {
        label: 'history, the 30 days before the snapshot',
        days: 30,
        liquidationsPerDay: median(before.count),
        debtRepaidUsdPerDay: median(before.repaid),
      },
      {
        label: `catch-up, the ${days} days after it`,
        days,
        liquidationsPerDay: median(after.count),
        debtRepaidUsdPerDay: median(after.repaid),
      },
      {
        label: 'catch-up, first day',
        days: 1,
        liquidationsPerDay: after.count[0]!,
        debtRepaidUsdPerDay: after.repaid[0]!,
      },
      {
        label: 'catch-up, its last minute',
        days: 0,
        liquidationsPerDay: lastMinute.length,
        debtRepaidUsdPerDay: lastMinute.reduce((s, e) => s + e.debtRepaidUsd, 0),
      },
    ];
    const result = {
      profile: 'default',
      seed: DEFAULT_SEED,
      snapshot: new Date(AT).toISOString(),
      to: new Date(toMs).toISOString(),
      liquidations: step.events.length,
      rows,
      perDayAfter: after.count,
    };
    if (values['json-out']) writeFileSync(values['json-out'], JSON.stringify(result, null, 2));
    process.stdout.write(
      [
        `Measured (\`default\`, catching up from the snapshot to ${result.to.slice(0, 16)}Z):`,
        '',
        '| | liquidations a day (median) | debt repaid a day (median) |',
        '| --- | --- | --- |',
        ...rows.map(
          (r) =>
            `| ${r.label} | ${fmt(r.liquidationsPerDay)} | ${r.debtRepaidUsdPerDay === 0 ? '$0' : usdM(r.debtRepaidUsdPerDay)} |`,
        ),
        '',
      ].join('\n'),
    );
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
