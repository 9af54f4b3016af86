import { Type } from '@fastify/type-provider-typebox';
import { sourceInUse } from '../../../data/read-model.ts';
import { estimateSeconds, type PassState } from '../../../domain/pass-state.ts';
import type { ChainSync, SourceState } from '../../../domain/records/sources.ts';
import type { AppDeps, HealthReport, SyncProgress } from '../../context.ts';
import { API_VERSION } from '../../plugins/openapi.ts';
import { REQUEST_ID_HEADER } from '../../schemas.ts';
import type { Api } from '../types.ts';

/** A response schema with its description and the headers it carries (documentation only). */
function withDocs<T extends object>(description: string, schema: T): T {
  return { ...schema, description, headers: REQUEST_ID_HEADER };
}

/** GET /health: no key needed, not counted. */
export function registerHealth(v1: Api, deps: AppDeps): void {
  v1.get(
    '/health',
    {
      schema: {
        operationId: 'health',
        summary: 'Service health',
        description: 'State of the store, the limiter backend and each dataset. No key needed; not counted.',
        // No key: an explicit empty requirement, so tools do not assume one.
        security: [],
        response: {
          200: withDocs(
            'The state of the service and of each data source.',
            Type.Object({
              status: Type.Unsafe<string>({
                type: 'string',
                enum: ['ok', 'degraded'],
                description:
                  "`degraded` while the store or the limiter is not `up`, an ingestion pass is overdue, a source of the sources file has never been read (its `lastRefresh` is null: nothing of it is served yet), or a chain is syncing (its source's `sync`: what is served of it is partial).",
              }),
              version: Type.String(),
              store: Type.Object({
                backend: Type.String(),
                state: Type.Unsafe<string>({
                  type: 'string',
                  enum: ['up', 'degraded', 'down'],
                  description:
                    '`degraded`: the store answers reads but refuses writes (a full disk, say): data and counted requests are served (counts wait in memory), requests that must write (creating or revoking a key) get 503 with Retry-After.',
                }),
                writesFailingSince: Type.Optional(
                  Type.String({ description: 'While writes fail: ISO 8601 UTC time of the first failure.' }),
                ),
                writeError: Type.Optional(
                  Type.String({
                    description: "While writes fail: the store's error, e.g. `database or disk is full`.",
                  }),
                ),
              }),
              limiter: Type.Object({ backend: Type.String(), state: Type.String() }),
              datasets: Type.Array(
                Type.Object({
                  mode: Type.String(),
                  kind: Type.String(),
                  profile: Type.String(),
                  refreshedAt: Type.String(),
                  markets: Type.Integer(),
                  positions: Type.Integer(),
                }),
                {
                  description:
                    "The datasets served, by key mode: live keys' (absent while no source of the sources file has been read yet: live keys then get empty answers) and test keys' sandbox once built.",
                },
              ),
              ingestion: Type.Unsafe<PassState | null>({
                type: ['object', 'null'],
                description:
                  'The ingestion pass of the sources file running in this process (the one that holds the ingestion lease), or null when none is. `overdue`: it has run longer than `expectedSeconds` (twice the interval between passes, at least 60 s), and `status` is `degraded`: a source that does not answer shows here while the pass still waits for it.',
                properties: {
                  startedAt: { type: 'string', description: 'ISO 8601 UTC time the pass started.' },
                  runningSeconds: { type: 'integer', description: 'Seconds it has been running.' },
                  expectedSeconds: {
                    type: 'integer',
                    description: 'Seconds a pass may take before it is overdue.',
                  },
                  overdue: { type: 'boolean' },
                  sources: {
                    type: 'array',
                    description:
                      "Each source's part of the pass as it stands, those with something under way: a first sync shows here each protocol's walk over its history.",
                    items: {
                      type: 'object',
                      properties: {
                        source: { type: 'string', examples: ['chain:1'] },
                        callsAnswered: {
                          type: 'integer',
                          description:
                            'Contract reads answered in this pass so far (markets, accounts, prices).',
                        },
                        logWalks: {
                          type: 'array',
                          description: 'Its `eth_getLogs` walks over block ranges under way.',
                          items: {
                            type: 'object',
                            properties: {
                              what: {
                                type: 'string',
                                description:
                                  "The protocol whose logs it reads (`aave` for Aave v3 and Spark pools, `shared` for a pass's one read of every contract).",
                              },
                              fromBlock: { type: 'integer' },
                              toBlock: { type: 'integer' },
                              reachedBlock: {
                                type: 'integer',
                                description:
                                  'The last block whose logs are read (fromBlock - 1 before the first answer).',
                              },
                              blocksDone: { type: 'integer' },
                              blocksTotal: { type: 'integer' },
                              logs: { type: 'integer', description: 'Logs read so far.' },
                              estimateSeconds: {
                                type: ['integer', 'null'],
                                description: 'Seconds left at the pace so far; null before the first answer.',
                              },
                            },
                            required: [
                              'what',
                              'fromBlock',
                              'toBlock',
                              'reachedBlock',
                              'blocksDone',
                              'blocksTotal',
                              'logs',
                              'estimateSeconds',
                            ],
                            additionalProperties: false,
                          },
                        },
                      },
                      required: ['source', 'callsAnswered', 'logWalks'],
                      additionalProperties: false,
                    },
                  },
                },
                required: ['startedAt', 'runningSeconds', 'expectedSeconds', 'overdue', 'sources'],
                additionalProperties: false,
              }),
              sources: Type.Array(
                Type.Object({
                  id: Type.String({ description: "e.g. 'sandbox', 'chain:1', 'morpho-api'." }),
                  kind: Type.String({ description: "'simulation', 'chain' or 'api'." }),
                  chains: Type.Array(Type.Integer()),
                  lastRefresh: Type.Unsafe<string | null>({
                    type: ['string', 'null'],
                    description:
                      'ISO 8601 UTC time of the last successful refresh; null before the first (the source has not been read yet: nothing of it is served, see `lastError`).',
                  }),
                  ageSeconds: Type.Unsafe<number | null>({
                    type: ['number', 'null'],
                    description: 'Seconds since the last successful refresh.',
                  }),
                  lastBlock: Type.Record(Type.String(), Type.Integer(), {
                    description: 'Last block read, by chain id (chain sources).',
                  }),
                  lagBlocks: Type.Record(Type.String(), Type.Integer(), {
                    description:
                      'Blocks between the chain head seen by the last successful refresh and the last block read, by chain id (chain sources: the confirmations kept back, plus any backlog).',
                  }),
                  sync: Type.Optional(
                    Type.Record(
                      Type.String(),
                      Type.Object({
                        fromBlock: Type.Integer(),
                        throughBlock: Type.Integer(),
                        toBlock: Type.Integer(),
                        blocksDone: Type.Integer(),
                        blocksTotal: Type.Integer(),
                        accounts: Type.Integer(),
                        startedAt: Type.String(),
                        estimateSeconds: Type.Unsafe<number | null>({ type: ['integer', 'null'] }),
                      }),
                      {
                        description:
                          'Chain sources: each chain still syncing, pass by pass, each stored: logs read from `fromBlock` through `throughBlock`, the state at `toBlock`, accounts found, `estimateSeconds` at the pace so far (null before any block). Absent once synced.',
                      },
                    ),
                  ),
                  consecutiveFailures: Type.Integer(),
                  lastError: Type.Unsafe<string | null>({
                    type: ['string', 'null'],
                    description:
                      'Message of the last failed refresh (credentials removed); null after a success.',
                  }),
                  inUse: Type.Boolean({
                    description:
                      "Whether the source is behind the live data now: false for the sandbox's simulation once real sources serve, and for a source no longer in the sources file (its last refresh older than the live data's). A source not in use counts in no answer's freshness.",
                  }),
                }),
                {
                  description:
                    'Every data source of the live store, as last recorded, and each source of the sources file no pass has recorded yet.',
                },
              ),
            }),
          ),
        },
      },
    },
    async () => {
      const report: HealthReport = deps.health ? await deps.health() : await defaultHealth(deps);
      return { ...report, version: API_VERSION };
    },
  );
}

async function defaultHealth(deps: AppDeps): Promise<HealthReport> {
  let storeUp: boolean;
  try {
    if (deps.store.ping) storeUp = await deps.store.ping();
    else {
      await deps.store.keysVersion();
      storeUp = true;
    }
  } catch {
    storeUp = false;
  }
  // The test keys' sandbox is listed once built: a health check must not build it (a second of
  // work the load balancer would wait for, and the overload guard would shed after).
  // The live keys' empty model of a sources file not read yet is no dataset: not listed.
  const datasets = (['live', 'test'] as const).flatMap((mode) => {
    const model = deps.data.peek ? deps.data.peek(mode) : deps.data.get(mode);
    if (!model?.synced) return [];
    const d = model.dataset;
    return {
      mode,
      kind: d.kind,
      profile: d.profile,
      refreshedAt: new Date(d.refreshedAt).toISOString(),
      markets: d.marketCount,
      positions: d.positionCount,
    };
  });
  const recorded = storeUp ? await deps.store.listSources().catch(() => []) : [];
  // A configured source no pass has recorded yet (another server's first pass still running) is
  // listed too, as not read.
  const known = new Set(recorded.map((s) => s.id));
  const configured = deps.configuredSources ?? [];
  const sources: Omit<SourceState, 'updatedAt' | 'cursor'>[] = [
    ...recorded,
    ...configured
      .filter((c) => !known.has(c.id))
      .map((c) => ({
        id: c.id,
        kind: c.kind,
        chainIds: [...c.chainIds],
        refreshedAt: null,
        lastBlock: {},
        consecutiveFailures: 0,
        lastError: null,
      })),
  ];
  // A source of the sources file never read: nothing of it is served yet.
  const unread = configured.some((c) => sources.find((s) => s.id === c.id)?.refreshedAt === null);
  const nowMs = deps.clock.now();
  const live = deps.data.peek ? deps.data.peek('live') : deps.data.get('live');
  const inUse = (s: (typeof sources)[number]) => live === null || sourceInUse(live.dataset, s);
  const syncing = sources.some((s) => s.sync !== undefined && inUse(s));
  const limiterState = deps.admission.state?.() ?? 'up';
  const ingestion = deps.ingestion?.(nowMs) ?? null;
  // Read after the ping, which tries a write while writes fail (and so clears a passed problem).
  const writes = storeUp ? (deps.store.writeProblem?.() ?? null) : null;
  return {
    status:
      storeUp && !writes && limiterState === 'up' && !ingestion?.overdue && !unread && !syncing
        ? 'ok'
        : 'degraded',
    store: {
      backend: deps.store.kind,
      state: !storeUp ? 'down' : writes ? 'degraded' : 'up',
      ...(writes
        ? { writesFailingSince: new Date(writes.since).toISOString(), writeError: writes.error }
        : {}),
    },
    limiter: { backend: deps.admission.backend, state: limiterState },
    datasets,
    ingestion,
    sources: sources.map((s) => ({
      id: s.id,
      kind: s.kind,
      chains: s.chainIds,
      lastRefresh: s.refreshedAt === null ? null : new Date(s.refreshedAt).toISOString(),
      ageSeconds: s.refreshedAt === null ? null : Math.max(0, Math.round((nowMs - s.refreshedAt) / 1000)),
      lastBlock: s.lastBlock,
      lagBlocks: Object.fromEntries(
        Object.entries(s.head ?? {}).flatMap(([chain, head]) => {
          const last = s.lastBlock[chain];
          return last === undefined ? [] : [[chain, Math.max(0, head - last)]];
        }),
      ),
      ...(s.sync ? { sync: syncProgress(s.sync, nowMs) } : {}),
      consecutiveFailures: s.consecutiveFailures,
      lastError: s.lastError,
      inUse: inUse(s),
    })),
  };
}

/** A source's syncs under way, with their progress and the time left at the pace so far. */
function syncProgress(sync: Record<string, ChainSync>, nowMs: number): Record<string, SyncProgress> {
  return Object.fromEntries(
    Object.entries(sync).map(([chain, c]) => {
      const blocksTotal = c.toBlock - c.fromBlock + 1;
      const blocksDone = c.throughBlock - c.fromBlock + 1;
      return [
        chain,
        {
          fromBlock: c.fromBlock,
          throughBlock: c.throughBlock,
          toBlock: c.toBlock,
          blocksDone,
          blocksTotal,
          accounts: c.accounts,
          startedAt: new Date(c.startedAt).toISOString(),
          estimateSeconds: estimateSeconds(blocksDone, blocksTotal, nowMs - c.startedAt),
        },
      ];
    }),
  );
}
