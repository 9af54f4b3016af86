/** Writing the sandbox into a store: the generated dataset, and its source's checkpoint. */

import { type Clock, systemClock } from '../domain/clock.ts';
import type { DatasetInfo } from '../domain/records/dataset.ts';
import { ingestOnce } from '../ingest/runner.ts';
import { SandboxHistoryFeed, sandboxSimulation } from '../ingest/sandbox/history.ts';
import { DEFAULT_SEED } from '../ingest/sandbox/index.ts';
import { sandboxSource } from '../ingest/sandbox/source.ts';
import type { ProgressFn } from '../store/ports/market-data.ts';
import type { Store } from '../store/types.ts';
import { StoreWriteError } from '../store/write-health.ts';

/** Generates a sandbox profile and writes it to the store, replacing the dataset. */
export async function seedStore(
  store: Store,
  profile: 'default' | 'large',
  seed: number = DEFAULT_SEED,
  onProgress?: ProgressFn,
  onlyIfEmpty = false,
  clock: Clock = systemClock(),
  historyDays = 0,
): Promise<DatasetInfo> {
  // Progress: the positions written, then the markets whose history is written.
  let firstTotal = 0;
  const run = await ingestOnce(sandboxSource(profile, seed), store, clock, {
    onlyIfEmpty,
    onProgress: (done, total) => {
      firstTotal = total;
      onProgress?.(done, total + (historyDays > 0 ? total : 0));
    },
  });
  if (!run.ok || !run.dataset) {
    // A disk that refuses writes is the environment's problem, told as such (one line at start).
    const writes = store.writeProblem?.();
    if (writes) throw new StoreWriteError(writes.error, run.error);
    throw new Error(`seeding the sandbox failed: ${run.error ?? 'no dataset written'}`);
  }
  if (historyDays > 0 && run.dataset.kind === 'sandbox') {
    // The daily snapshots and liquidations of the history now; hourly rows follow in the
    // background once the service runs (SandboxHistoryFeed).
    const { profile: p, seed: s } = run.dataset;
    const sim = sandboxSimulation(p === 'large' ? 'large' : 'default', s ?? DEFAULT_SEED);
    const feed = new SandboxHistoryFeed(store, sim, { days: historyDays });
    await feed.advance(clock.now(), {
      baseOnly: true,
      onProgress: (done, total) =>
        onProgress?.(firstTotal + Math.round((done / Math.max(1, total)) * firstTotal), 2 * firstTotal),
    });
  }
  return run.dataset;
}

/**
 * A store seeded before sources were recorded holds a sandbox dataset and no checkpoint for it:
 * the checkpoint is written from the dataset's refresh time, so /health lists the source.
 */
export async function recordSandboxSource(store: Store, clock: Clock): Promise<void> {
  const dataset = await store.datasetInfo();
  if (dataset?.kind !== 'sandbox') return;
  if ((await store.listSources()).some((s) => s.id === 'sandbox')) return;
  const chainIds = (await store.loadMarkets()).map((m) => m.chainId);
  await store.saveSource({
    id: 'sandbox',
    kind: 'simulation',
    chainIds: [...new Set(chainIds)].sort((a, b) => a - b),
    refreshedAt: dataset.refreshedAt,
    lastBlock: {},
    consecutiveFailures: 0,
    lastError: null,
    updatedAt: Math.floor(clock.now()),
    cursor: null,
  });
}
