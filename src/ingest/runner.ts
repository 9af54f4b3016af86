import type { Clock } from '../domain/clock.ts';
import type { DatasetInfo } from '../domain/records/dataset.ts';
import type { SourceState } from '../domain/records/sources.ts';
import type { MarketDataStore, ProgressFn } from '../store/ports/market-data.ts';
import type { SourceStore } from '../store/ports/sources.ts';
import type { ItemReport, Source } from './contract.ts';

export interface IngestResult {
  source: string;
  ok: boolean;
  /** The dataset now in the store, when the run wrote a snapshot. */
  dataset: DatasetInfo | null;
  items: ItemReport[];
  error: string | null;
  state: SourceState;
}

/**
 * Credentials never reach a checkpoint, a log line or /health: a URL's user information (up to
 * its last `@`), query values of parameters whose name holds key, token, secret, password or
 * auth (`apiKey`, `dkey`, `access_token`), path segments that look like API keys
 * (20 or more letters, digits, `_` or `-`), and bearer tokens.
 */
export function redactSecrets(text: string): string {
  return text
    .replace(/\b([a-z][a-z0-9+.-]*:\/\/)\S*@/gi, '$1[redacted]@')
    .replace(/([?&][^=&\s]*(?:key|token|secret|password|auth)[^=&\s]*=)[^&\s]*/gi, '$1[redacted]')
    .replace(/\/[A-Za-z0-9_-]{20,}(?=[/?#\s)]|$)/g, '/[redacted]')
    .replace(/\b(bearer\s+)\S+/gi, '$1[redacted]')
    .slice(0, 500);
}

/** The checkpoint of a source that has never run. */
export function newSourceState(source: Source): SourceState {
  return {
    id: source.id,
    kind: source.kind,
    chainIds: [...source.chainIds],
    refreshedAt: null,
    lastBlock: {},
    consecutiveFailures: 0,
    lastError: null,
    updatedAt: 0,
    cursor: null,
  };
}

/**
 * Runs a source once and records the outcome in its checkpoint: on success the data is written
 * (ingestion owns the writes) and the refresh time and blocks move on; on failure nothing is
 * written, the failure is counted and its message kept, and the last good data stays.
 * `onlyIfEmpty`: a snapshot is written only into an empty store (first start).
 */
export async function ingestOnce(
  source: Source,
  store: MarketDataStore & SourceStore,
  clock: Clock,
  options: { onProgress?: ProgressFn; onlyIfEmpty?: boolean } = {},
): Promise<IngestResult> {
  const previous = (await store.listSources()).find((s) => s.id === source.id);
  const base: SourceState = previous ?? newSourceState(source);
  try {
    const out = await source.run(clock.now());
    let dataset: DatasetInfo | null = null;
    if (out.snapshot) {
      dataset = await store.replaceDataset(
        { ...out.snapshot, onlyIfEmpty: options.onlyIfEmpty },
        options.onProgress,
      );
    }
    const now = Math.floor(clock.now());
    // With onlyIfEmpty the store may have kept an existing dataset: its refresh time is the truth.
    const state: SourceState = {
      ...base,
      kind: source.kind,
      chainIds: [...source.chainIds],
      refreshedAt: dataset ? dataset.refreshedAt : now,
      lastBlock: { ...base.lastBlock, ...out.blocks },
      consecutiveFailures: 0,
      lastError: null,
      updatedAt: now,
    };
    await store.saveSource(state);
    return { source: source.id, ok: true, dataset, items: out.items, error: null, state };
  } catch (err) {
    const error = redactSecrets(err instanceof Error ? err.message : String(err));
    const state: SourceState = {
      ...base,
      consecutiveFailures: base.consecutiveFailures + 1,
      lastError: error,
      updatedAt: Math.floor(clock.now()),
    };
    await store.saveSource(state);
    return { source: source.id, ok: false, dataset: null, items: [], error, state };
  }
}
