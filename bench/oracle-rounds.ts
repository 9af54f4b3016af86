/**
 * The sandbox's simulated oracle feeds, timed in process on the default profile (4,000
 * markets, about 1,100 feeds, 50,000 positions):
 *
 * - a sandbox tick as the service makes one every SIMULATION_TICK_MS (5 s): every token's
 *   price at the next instant applied to the catalog and the risk index, without and with the
 *   feeds' latest rounds (Catalog.applyFeedUpdates), over consecutive 5-second instants (the
 *   feed clocks move forward, each check made once); and the feed clocks' warm-up (the
 *   first tick replays each feed's current heartbeat cell);
 * - the history rows: every feed's rounds over `--days` days (oracleRoundRows), one window a
 *   day, with the share spent pricing assets minute by minute.
 *
 * Run: node --expose-gc bench/oracle-rounds.ts [--days N] [--ticks N]
 */
import { parseArgs } from 'node:util';
import { applyPrices, buildReadModel } from '../src/data/read-model.ts';
import { feedClock, oracleRoundRows, sandboxFeeds } from '../src/ingest/sandbox/feeds.ts';
import { DEFAULT_SEED, generateSandbox, SANDBOX_AS_OF } from '../src/ingest/sandbox/index.ts';
import { sandboxPriceBasis, sandboxPricer } from '../src/ingest/sandbox/live.ts';
import { DAY_MS, MINUTE_MS } from '../src/ingest/sandbox/simulation/noise.ts';
import { gc, log, sig, summarize } from './lib.ts';

const { values } = parseArgs({
  options: { days: { type: 'string', default: '7' }, ticks: { type: 'string', default: '2000' } },
});
const days = Number(values.days);
const ticks = Number(values.ticks);
const TICK_MS = 5_000;
const AT = Date.parse('2026-11-24T12:00:00Z');

const ds = generateSandbox({ profile: 'default', seed: DEFAULT_SEED });
const info = {
  kind: 'sandbox' as const,
  profile: 'default',
  seed: DEFAULT_SEED,
  refreshedAt: AT,
  marketCount: ds.markets.length,
  positionCount: ds.positionCount,
  version: 1,
  changeSeq: 0,
};

/** Times `ticks` consecutive ticks of a fresh model from AT on, with or without the feeds. */
async function tickTimes(withFeeds: boolean) {
  const model = buildReadModel(ds.markets, ds.positions(), info, AT);
  const pricer = sandboxPricer(ds.markets, DEFAULT_SEED);
  const { model: prices } = sandboxPriceBasis(ds.markets, DEFAULT_SEED);
  const clock = feedClock(sandboxFeeds(ds.markets, prices), prices);
  await pricer.warm(AT + ticks * TICK_MS);
  let warmMs = 0;
  if (withFeeds) {
    const t0 = performance.now();
    await clock.warm(AT);
    warmMs = performance.now() - t0;
  }
  const samples = new Float64Array(ticks);
  let updates = 0;
  gc();
  for (let i = 0; i < ticks; i++) {
    const t = AT + i * TICK_MS;
    const t0 = performance.now();
    const feeds = withFeeds ? clock.updatesAt(t) : [];
    applyPrices(model, pricer.pricesAt(t), t, feeds);
    samples[i] = performance.now() - t0;
    if (i > 0) updates += feeds.length;
  }
  const s = summarize(samples);
  return {
    medianMs: sig(s.median),
    p99Ms: sig(s.p99),
    maxMs: sig(samples[samples.length - 1]!),
    warmMs: sig(warmMs),
    feedUpdatesPerTick: sig(updates / (ticks - 1)),
    feeds: clock.feeds.length,
  };
}

const before = await tickTimes(false);
log(`tick, prices only: median ${before.medianMs} ms, p99 ${before.p99Ms} ms, max ${before.maxMs} ms`);
const after = await tickTimes(true);
log(
  `tick, prices and ${after.feeds} feeds: median ${after.medianMs} ms, p99 ${after.p99Ms} ms, max ${after.maxMs} ms; ` +
    `feed clocks warmed in ${after.warmMs} ms; ${after.feedUpdatesPerTick} feed updates a tick`,
);

{
  const { model } = sandboxPriceBasis(ds.markets, DEFAULT_SEED);
  const feeds = sandboxFeeds(ds.markets, model);
  const to = SANDBOX_AS_OF * 1000;
  const from = to - days * DAY_MS;
  // What pricing alone costs: each asset a feed reads, every minute of one day.
  const assets = new Set(
    feeds.flatMap((f) => (f.spec.quote ? [f.spec.asset, f.spec.quote] : [f.spec.asset])),
  );
  let t0 = performance.now();
  let sink = 0;
  for (const a of assets) for (let t = to - DAY_MS; t < to; t += MINUTE_MS) sink += model.priceAt(a, t);
  const priceDayMs = performance.now() - t0;
  if (!(sink > 0)) throw new Error('no prices');
  gc();
  t0 = performance.now();
  let rows = 0;
  for (const batch of oracleRoundRows(model, feeds, from, to)) rows += batch.length;
  const ms = performance.now() - t0;
  log(
    `rounds over ${days} days: ${rows.toLocaleString('en-US')} rows from ${feeds.length} feeds in ${sig(ms / 1000)} s ` +
      `(a year: about ${sig((ms * 365) / days / 1000)} s, ${Math.round((rows * 365) / days).toLocaleString('en-US')} rows); ` +
      `pricing ${assets.size} assets minute by minute: ${sig(priceDayMs)} ms a day (${sig((priceDayMs * 365) / 1000)} s a year)`,
  );
}
