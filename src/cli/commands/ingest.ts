import { setTimeout as sleep } from 'node:timers/promises';
import { ingestInterval, ingestLeaseMs, type Settings } from '../../config.ts';
import { redactSecrets } from '../../ingest/runner.ts';
import { processHolder } from '../../store/lease-holder.ts';
import { fail, parseCommand, withStore } from '../command.ts';

/** `lrds ingest --help`, also printed after a usage mistake. */
const INGEST_HELP = `Usage: lrds ingest [--once]

Reads the sources of SOURCES_FILE into the store: on each chain, Morpho Blue, Aave v3, Spark,
Compound v3, Euler v2, Fluid and Chainlink feeds; and Morpho's GraphQL API.
  --once   read every source once, then exit: 0 when every source succeeded, 1 otherwise (each
           failed source named, or a sync that does not catch up with the head); a chain whose
           logs are more than its syncBlocks behind is read in as many passes as it takes, each
           stored. Without it, a pass every INGEST_INTERVAL_MS until stopped (at once while a
           sync catches up)`;

/** One line per source of an ingestion pass, on stderr; the items that failed under it. */
function printPass(run: import('../../ingest/live.ts').SourceRun): void {
  // (An API source reads no block.)
  const at = Object.entries(run.state.lastBlock)
    .map(([, block]) => ` at block ${block}`)
    .join(',');
  if (run.ok) {
    const failed = run.items.filter((i) => !i.ok);
    process.stderr.write(
      `${run.source}: ok${at}: ${run.markets} markets, ${run.positions} positions` +
        (run.vaults > 0 ? `, ${run.vaults} vaults` : '') +
        (run.liquidations > 0 ? `, ${run.liquidations} liquidations` : '') +
        (run.stateRead ? '' : ' (nothing of ours logged: the state as last read)') +
        (failed.length > 0 ? `; ${failed.length} items not read:` : '') +
        '\n',
    );
    for (const f of failed.slice(0, 20)) process.stderr.write(`  - ${f.ok ? '' : f.error}\n`);
    if (failed.length > 20) process.stderr.write(`  - and ${failed.length - 20} more\n`);
    const noted = run.items.flatMap((i) => (i.ok && i.note ? [i.note] : []));
    if (noted.length > 0) process.stderr.write(`  ${noted.length} served in part:\n`);
    for (const n of noted.slice(0, 20)) process.stderr.write(`  - ${n}\n`);
    if (noted.length > 20) process.stderr.write(`  - and ${noted.length - 20} more\n`);
  } else {
    process.stderr.write(
      `${run.source}: FAILED (${run.state.consecutiveFailures} in a row): ${run.error}; its last data (${run.markets} markets) is kept\n`,
    );
  }
}

export async function ingest(settings: Settings, args: string[]): Promise<void> {
  const { values } = parseCommand(INGEST_HELP, args, { once: { type: 'boolean', default: false } });
  if (!settings.sourcesFile)
    fail('SOURCES_FILE is not set: name the sources file to read (see the README, "Real data")');
  const { loadSourcesFile, configuredSources } = await import('../../ingest/chain/index.ts');
  const { errorText, ingestWithLease, syncGap } = await import('../../ingest/live.ts');
  const { systemClock } = await import('../../domain/clock.ts');
  const sources = configuredSources(loadSourcesFile(settings.sourcesFile));
  const clock = systemClock();
  // The store's ingestion lease: one ingester per store, this command or a server (docs/decisions.md "Real sources").
  const lease = {
    holder: processHolder('lrds-ingest'),
    ms: ingestLeaseMs(settings),
  };
  const held =
    'another process holds the ingestion lease of this store (a server with SOURCES_FILE, or lrds ingest)';
  await withStore(settings, async (store) => {
    try {
      if (values.once) {
        // One whole read: a sync longer than a chain's syncBlocks takes several passes, each stored.
        let pass = await ingestWithLease(sources, store, clock, lease, { onSource: printPass });
        let stored = 0;
        let left = Number.POSITIVE_INFINITY;
        for (let gap = syncGap(pass); gap !== null && gap < left; gap = syncGap(pass)) {
          left = gap;
          stored++;
          pass = await ingestWithLease(sources, store, clock, lease, { onSource: printPass });
        }
        if (!pass?.written) {
          process.stderr.write(
            stored > 0 ? `${held}: it was lost after ${stored} passes stored\n` : `${held}: nothing read\n`,
          );
          process.exitCode = 1;
          return;
        }
        if (syncGap(pass) !== null) {
          process.stderr.write(
            `a sync does not catch up with the chain's head (${syncGap(pass)} blocks of logs left): raise the chain's syncBlocks above the blocks it makes during a pass\n`,
          );
          process.exitCode = 1;
        }
        const failed = pass.runs.filter((r) => !r.ok);
        if (pass.dataset)
          process.stderr.write(
            `Wrote ${pass.dataset.marketCount} markets and ${pass.dataset.positionCount} positions (dataset version ${pass.dataset.version}).\n`,
          );
        if (failed.length > 0) {
          process.stderr.write(
            `${failed.length} of ${pass.runs.length} sources failed: ${failed.map((r) => r.source).join(', ')}\n`,
          );
          process.exitCode = 1;
        }
        return;
      }
      let stopping = false;
      const stop = () => {
        stopping = true;
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      let standing = false;
      // Blocks of logs the last pass left to read (a sync under way).
      let left = Number.POSITIVE_INFINITY;
      while (!stopping) {
        // A pass that fails as a whole (the store unreachable) is reported; the next one follows.
        const pass = await ingestWithLease(sources, store, clock, lease, { onSource: printPass }).catch(
          (err: unknown) => {
            process.stderr.write(`ingestion pass failed: ${redactSecrets(errorText(err))}\n`);
            return undefined;
          },
        );
        if (pass === null && !standing) process.stderr.write(`${held}: standing by\n`);
        standing = pass === null;
        // A source still syncing, and catching up: the next pass at once.
        const gap = syncGap(pass);
        if (gap !== null && gap < left) {
          left = gap;
          continue;
        }
        left = Number.POSITIVE_INFINITY;
        for (let waited = 0; waited < ingestInterval(settings) && !stopping; waited += 100) await sleep(100);
      }
    } finally {
      await store.releaseIngestion(lease.holder).catch(() => undefined);
    }
  });
}
