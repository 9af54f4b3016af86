/**
 * The sources file (docs/decisions.md "Real sources"): which chains to read, through which RPC, and what on each.
 * Read once at start-up from the file named by SOURCES_FILE and validated like the tier file:
 * every problem is listed at once, each as `path: problem`.
 *
 *   { "chains": [
 *       { "chainId": 1, "rpcUrl": "https://…", "confirmations": 2,
 *         "morpho": { "blue": "0x…", "fromBlock": 18883124 },
 *         "chainlink": [{ "address": "0x…", "pair": "ETH/USD", "heartbeatSeconds": 3600 }] } ],
 *     "morphoApi": { "url": "https://api.morpho.org/graphql", "chainIds": [1, 8453] } }
 *
 * Chains read Morpho Blue, Aave v3 and Spark pools, Compound v3 comets, Euler v2, Fluid and
 * Chainlink feeds; `morphoApi` reads Morpho's markets, positions, liquidations and vaults from
 * its GraphQL API on the chains it names (src/ingest/api/morpho-api.ts says which it serves).
 */

import { readFileSync } from 'node:fs';
import { deployments, getChainAddresses } from '@morpho-org/blue-sdk';
import { type Static, Type } from 'typebox';
import Value from 'typebox/value';
import { DEFAULT_PROVIDER_LIMITS, type ProviderLimits } from './chain/transport.ts';
import type { RefChainlinkFeed } from './sandbox/reference.ts';

/**
 * How long one JSON-RPC request may take, ms, unless a chain's `rpcTimeoutMs` says otherwise: a
 * node that never answers costs a pass this, times the transport's tries (RPC_RETRIES + 1).
 */
export const DEFAULT_RPC_TIMEOUT_MS = DEFAULT_PROVIDER_LIMITS.timeoutMs;

/**
 * Blocks of logs one pass reads at most while a chain is behind, unless its entry says
 * otherwise: about 70 days of Ethereum, a few hundred `eth_getLogs` per protocol at a provider's
 * range cap.
 */
export const DEFAULT_SYNC_BLOCKS = 500_000;

/**
 * The longest a chain's state (rates, indices and totals, prices not published as a feed's
 * rounds) goes unread while no log of its contracts or feeds arrives, seconds, unless its entry
 * says otherwise: interest at 10 % a year moves a figure by 1 part in 10.5 million in that time,
 * under the 1 part in 10 million a market's record is written for.
 */
export const DEFAULT_STATE_MAX_AGE_SECONDS = 30;

const ADDRESS_PATTERN = '^0x[0-9a-fA-F]{40}$';
const PAIR_PATTERN = '^[^/\\s]+/[^/\\s]+$';
const URL_PATTERN = '^https?://';
/** What a pattern means, in a problem's words. */
const PATTERN_PROBLEMS: Readonly<Record<string, string>> = {
  [ADDRESS_PATTERN]: 'must be a 0x address (40 hex digits)',
  [PAIR_PATTERN]: 'must be BASE/QUOTE, e.g. ETH/USD',
  [URL_PATTERN]: 'must be an http:// or https:// URL',
};
const ADDRESS = Type.String({ pattern: ADDRESS_PATTERN });
const BLOCK = Type.Integer({ minimum: 0 });

const FeedSchema = Type.Object(
  {
    address: ADDRESS,
    /** `BASE/QUOTE`, e.g. `ETH/USD`: what the feed prices ("Real sources" (docs/decisions.md)'s pricing reads it). */
    pair: Type.String({ pattern: PAIR_PATTERN }),
    heartbeatSeconds: Type.Optional(Type.Integer({ minimum: 1 })),
    /** The relative move that makes the feed publish before its heartbeat, percent (0.5 = 0.5 %). */
    deviationPercent: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100 })),
  },
  { additionalProperties: false },
);

const PoolSchema = Type.Object(
  { pool: ADDRESS, fromBlock: Type.Optional(BLOCK) },
  { additionalProperties: false },
);

const ChainSchema = Type.Object(
  {
    chainId: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
    rpcUrl: Type.String({ pattern: URL_PATTERN }),
    /** Other URLs of the same chain, tried in order when `rpcUrl` fails (after its retries). */
    fallbackRpcUrls: Type.Optional(Type.Array(Type.String({ pattern: URL_PATTERN }), { maxItems: 10 })),
    /** The provider's limits; each left out takes the default of the README's real-data page. */
    rpcLimits: Type.Optional(
      Type.Object(
        {
          batchCalls: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000 })),
          batchBytes: Type.Optional(Type.Integer({ minimum: 1_024, maximum: 100_000_000 })),
          responseBytes: Type.Optional(Type.Integer({ minimum: 1_024, maximum: 1_000_000_000 })),
          requestsPerSecond: Type.Optional(
            Type.Union([Type.Number({ exclusiveMinimum: 0, maximum: 100_000 }), Type.Null()]),
          ),
          retries: Type.Optional(Type.Integer({ minimum: 0, maximum: 20 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Blocks behind the head that ingestion reads up to (0: the head itself). */
    confirmations: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
    /** How long one JSON-RPC request may take before it is abandoned (and retried), ms. */
    rpcTimeoutMs: Type.Optional(Type.Integer({ minimum: 100, maximum: 120_000 })),
    /** Blocks of logs one pass of a first sync reads, at most (each pass is checkpointed). */
    syncBlocks: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000_000 })),
    /**
     * How long the state goes unread while nothing of ours logs, seconds (0: read every pass).
     */
    stateMaxAgeSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
    morpho: Type.Optional(
      Type.Object(
        {
          blue: Type.Optional(ADDRESS),
          fromBlock: Type.Optional(BLOCK),
          /**
           * MetaMorpho factories whose vaults are read; left out on a chain the address book knows:
           * its MetaMorpho v1.1 factory (and v1.0's where it was deployed); empty: no vault is read
           * on chain.
           */
          vaultFactories: Type.Optional(Type.Array(ADDRESS, { maxItems: 8 })),
        },
        { additionalProperties: false },
      ),
    ),
    /** Aave v3 pools; left out on a known chain: the pools of the shipped reference data. */
    aave: Type.Optional(Type.Array(PoolSchema)),
    /** SparkLend pools (Aave v3's code); left out on Ethereum: SparkLend's pool. */
    spark: Type.Optional(Type.Array(PoolSchema)),
    /** Compound v3 comets; left out on a known chain: the comets of the shipped reference data. */
    compound: Type.Optional(
      Type.Array(
        Type.Object(
          {
            comet: ADDRESS,
            fromBlock: Type.Optional(BLOCK),
            /** The CometRewards contract paying its rewards (left out: none read). */
            rewards: Type.Optional(ADDRESS),
          },
          { additionalProperties: false },
        ),
      ),
    ),
    /**
     * Euler v2: the chain's Ethereum Vault Connector (no address book ships it: required) and the
     * vault factory whose vaults are read (left out: any contract answering EVault's views).
     */
    euler: Type.Optional(
      Type.Object(
        { evc: ADDRESS, factory: Type.Optional(ADDRESS), fromBlock: Type.Optional(BLOCK) },
        { additionalProperties: false },
      ),
    ),
    /**
     * Fluid: its vault and positions resolvers (left out where Fluid is deployed: its own; null
     * reads no Fluid), and the block its vaults' logs start at (left out: the vault factory's).
     */
    fluid: Type.Optional(
      Type.Union([
        Type.Object(
          {
            vaultResolver: Type.Optional(ADDRESS),
            positionsResolver: Type.Optional(ADDRESS),
            fromBlock: Type.Optional(BLOCK),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ]),
    ),
    chainlink: Type.Optional(Type.Array(FeedSchema)),
  },
  { additionalProperties: false },
);

const MorphoApiSchema = Type.Object(
  {
    /** The GraphQL endpoint (Morpho's: https://api.morpho.org/graphql). */
    url: Type.String({ pattern: URL_PATTERN }),
    /** The chains whose Morpho data it is read for. */
    chainIds: Type.Array(Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }), { minItems: 1 }),
    /** Items asked per request (halved when the API finds a query too complex). */
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
  },
  { additionalProperties: false },
);

const FileSchema = Type.Object(
  {
    /** Left out or empty only with `morphoApi` (something must be read). */
    chains: Type.Optional(Type.Array(ChainSchema)),
    morphoApi: Type.Optional(MorphoApiSchema),
  },
  { additionalProperties: false },
);

type RawFile = Static<typeof FileSchema>;

/**
 * Fluid's resolvers, at one address on every chain it is deployed on, and its vault factory's
 * deployment block there (Instadapp/fluid-contracts-public, deployments/<network>/VaultResolver,
 * VaultPositionsResolver and VaultFactory; Arbitrum's factory block is not recorded: searched).
 */
const FLUID_RESOLVERS = {
  vaultResolver: '0xa5c3e16523eeeddcc34706b0e6be88b4c6ea95cc',
  positionsResolver: '0xaa21a86030eaa16546a759d2d10fd3bf9d053bc7',
};
const FLUID_FACTORY_BLOCKS: Readonly<Record<number, number | null>> = {
  1: 19_310_014,
  56: 71_734_805,
  137: 68_510_647,
  8453: 17_391_489,
  9745: 643_197,
  42161: null,
};

export interface FeedConfig {
  /** Lower-case. */
  address: string;
  pair: string;
  base: string;
  quote: string;
  heartbeatSeconds: number;
  /** 0 to 1 (0.005 = 0.5 %); null when unknown. */
  deviationThreshold: number | null;
}

export interface ChainConfig {
  chainId: number;
  rpcUrl: string;
  /** `rpcUrl`, then its fallbacks, in the order they are tried. */
  rpcUrls: string[];
  /** The provider's limits given in the file (the rest take their defaults; the timeout is rpcTimeoutMs). */
  rpcLimits: Partial<Omit<ProviderLimits, 'timeoutMs'>>;
  confirmations: number;
  /** Per JSON-RPC request, ms (DEFAULT_RPC_TIMEOUT_MS unless the file says otherwise). */
  rpcTimeoutMs: number;
  /**
   * Blocks of logs one pass reads at most while the chain is behind (a first sync, a long stop):
   * each such pass is stored with its checkpoint, so a restart goes on from it.
   */
  syncBlocks: number;
  /**
   * A pass whose blocks hold no log of the chain's contracts or feeds reads no state while the
   * state read last is younger than this, seconds, by the chain's clock (0: every pass reads it).
   */
  stateMaxAgeSeconds: number;
  /**
   * Morpho Blue, when read on this chain, and the MetaMorpho factories whose vaults are read
   * (lower-case; each from its deployment block: known, or null: found on the chain).
   */
  morpho: {
    blue: string;
    fromBlock: number;
    vaultFactories: { address: string; fromBlock: number | null }[];
  } | null;
  /** Aave v3 and Spark pools read on this chain (addresses lower-case; fromBlock null: from its deployment). */
  aave: { protocol: 'aave' | 'spark'; pool: string; fromBlock: number | null }[];
  /** Compound v3 comets read on this chain (addresses lower-case; fromBlock null: from its deployment). */
  compound: { comet: string; fromBlock: number | null; rewards: string | null }[];
  /**
   * Euler v2, when read on this chain: its EVC and vault factory (lower-case; factory null: not
   * checked), fromBlock null: from the EVC's deployment.
   */
  euler: { evc: string; factory: string | null; fromBlock: number | null } | null;
  /** Fluid, when read on this chain (addresses lower-case; fromBlock null: from the vault factory's deployment). */
  fluid: { vaultResolver: string; positionsResolver: string; fromBlock: number | null } | null;
  chainlink: FeedConfig[];
}

/** The Morpho API source ("Real sources" (docs/decisions.md)'s `morphoApi`). */
export interface MorphoApiConfig {
  url: string;
  chainIds: number[];
  /** Items asked per request. */
  pageSize: number;
}

/** Items the Morpho API is asked for per request unless the file says (its own maximum is 1,000). */
export const MORPHO_API_PAGE_SIZE = 500;

export interface SourcesConfig {
  chains: ChainConfig[];
  morphoApi: MorphoApiConfig | null;
}

/** The sources file is unreadable or invalid; `problems` lists every problem. */
export class SourcesConfigError extends Error {
  readonly problems: readonly string[];

  constructor(source: string, problems: readonly string[]) {
    super(`${source}: invalid sources file:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'SourcesConfigError';
    this.problems = Object.freeze([...problems]);
  }
}

/** A feed's heartbeat when neither the file nor the reference data gives one: a day. */
export const DEFAULT_HEARTBEAT_SECONDS = 86_400;

function path(instancePath: string): string {
  const p = instancePath
    .replace(/^\//, '')
    .split('/')
    .map((s, i) => (/^\d+$/.test(s) ? `[${s}]` : i ? `.${s}` : s));
  return p.join('') || '(root)';
}

/**
 * Validates a parsed sources file. `feeds` is the reference data of known Chainlink feeds (their
 * heartbeats and deviation thresholds fill what the file leaves out). Throws one
 * SourcesConfigError listing every problem.
 */
export function parseSources(
  json: unknown,
  source: string,
  feeds: readonly RefChainlinkFeed[] = [],
  comets: readonly KnownComet[] = [],
  pools: readonly KnownPool[] = [],
): SourcesConfig {
  const problems: string[] = [];
  for (const e of Value.Errors(FileSchema, json)) {
    if (e.keyword === 'additionalProperties') continue;
    const where = path(e.instancePath);
    const pattern =
      e.keyword === 'pattern'
        ? PATTERN_PROBLEMS[String((e.params as { pattern?: string }).pattern)]
        : undefined;
    problems.push(e.keyword === 'boolean' ? `${where}: unknown field` : `${where}: ${pattern ?? e.message}`);
  }
  if (problems.length > 0) throw new SourcesConfigError(source, problems);
  const file = json as RawFile;
  if (!file.chains?.length && !file.morphoApi)
    throw new SourcesConfigError(source, ['chains: at least one chain (or a morphoApi block) to read']);
  const seen = new Set<number>();
  const chains = (file.chains ?? []).map((c, i): ChainConfig => {
    if (seen.has(c.chainId)) problems.push(`chains[${i}].chainId: duplicate ${c.chainId}`);
    seen.add(c.chainId);
    // Left out on a chain the address book knows, Morpho Blue is read from its deployment block.
    const known = knownMorpho(c.chainId);
    let morpho: ChainConfig['morpho'] = null;
    if (c.morpho || known) {
      const blue = c.morpho?.blue ?? known?.blue;
      if (!blue)
        problems.push(`chains[${i}].morpho.blue: required on chain ${c.chainId} (no address book entry)`);
      else {
        const fromBlock = c.morpho?.fromBlock ?? known?.fromBlock ?? 0;
        // A factory is read from its own deployment, whatever Blue's fromBlock: its log is the only
        // way a vault is found.
        const knownFactories = new Map((known?.vaultFactories ?? []).map((f) => [f.address, f.fromBlock]));
        const factories = c.morpho?.vaultFactories ?? [...knownFactories.keys()];
        const vaultFactories = [...new Set(factories.map((f) => f.toLowerCase()))].map((address) => ({
          address,
          fromBlock: knownFactories.get(address) ?? null,
        }));
        morpho = { blue: blue.toLowerCase(), fromBlock, vaultFactories };
      }
    }
    // Left out on a chain the reference data lists comets for, those comets are read; an empty
    // list reads none. A comet without fromBlock is read from its deployment (the source finds it).
    const compound = (c.compound ?? comets.filter((r) => r.chainId === c.chainId)).map((x) => ({
      comet: x.comet.toLowerCase(),
      fromBlock: 'fromBlock' in x && typeof x.fromBlock === 'number' ? x.fromBlock : null,
      // A comet the reference data knows pays through its rewards contract unless the file names one.
      rewards:
        (typeof x.rewards === 'string'
          ? x.rewards
          : comets.find((r) => r.chainId === c.chainId && r.comet.toLowerCase() === x.comet.toLowerCase())
              ?.rewards
        )?.toLowerCase() ?? null,
    }));
    compound.forEach((x, j) => {
      if (compound.findIndex((y) => y.comet === x.comet) !== j)
        problems.push(`chains[${i}].compound[${j}].comet: duplicate ${x.comet}`);
    });
    // Aave and Spark likewise, from the pools of the shipped reference data.
    const aave = (['aave', 'spark'] as const).flatMap((protocol) =>
      (c[protocol] ?? pools.filter((r) => r.chainId === c.chainId && r.protocol === protocol)).map((x) => ({
        protocol,
        pool: x.pool.toLowerCase(),
        fromBlock: 'fromBlock' in x && typeof x.fromBlock === 'number' ? x.fromBlock : null,
      })),
    );
    aave.forEach((x, j) => {
      if (aave.findIndex((y) => y.pool === x.pool) !== j)
        problems.push(`chains[${i}].${x.protocol}: duplicate pool ${x.pool}`);
    });
    // Fluid: on a chain it is deployed on, its resolvers unless the file names others (null: none).
    let fluid: ChainConfig['fluid'] = null;
    const fluidDeployed = c.chainId in FLUID_FACTORY_BLOCKS;
    if (c.fluid !== null && (c.fluid !== undefined || fluidDeployed)) {
      const vaultResolver =
        c.fluid?.vaultResolver ?? (fluidDeployed ? FLUID_RESOLVERS.vaultResolver : undefined);
      const positionsResolver =
        c.fluid?.positionsResolver ?? (fluidDeployed ? FLUID_RESOLVERS.positionsResolver : undefined);
      if (!vaultResolver)
        problems.push(
          `chains[${i}].fluid.vaultResolver: required on chain ${c.chainId} (Fluid's is not known there)`,
        );
      if (!positionsResolver)
        problems.push(
          `chains[${i}].fluid.positionsResolver: required on chain ${c.chainId} (Fluid's is not known there)`,
        );
      if (vaultResolver && positionsResolver)
        fluid = {
          vaultResolver: vaultResolver.toLowerCase(),
          positionsResolver: positionsResolver.toLowerCase(),
          // The factory block is Fluid's own: with other resolvers, their factory's is searched.
          fromBlock:
            c.fluid?.fromBlock ??
            (vaultResolver.toLowerCase() === FLUID_RESOLVERS.vaultResolver
              ? (FLUID_FACTORY_BLOCKS[c.chainId] ?? null)
              : null),
        };
    }
    const addresses = new Set<string>();
    const chainlink = (c.chainlink ?? []).map((f, j): FeedConfig => {
      const address = f.address.toLowerCase();
      if (addresses.has(address)) problems.push(`chains[${i}].chainlink[${j}].address: duplicate ${address}`);
      addresses.add(address);
      const ref = feeds.find((r) => r.chainId === c.chainId && r.address.toLowerCase() === address);
      const [base, quote] = f.pair.split('/') as [string, string];
      const deviation = f.deviationPercent ?? ref?.deviationPercent ?? null;
      return {
        address,
        pair: f.pair,
        base: base.toUpperCase(),
        quote: quote.toUpperCase(),
        heartbeatSeconds: f.heartbeatSeconds ?? ref?.heartbeatSeconds ?? DEFAULT_HEARTBEAT_SECONDS,
        deviationThreshold: deviation === null ? null : deviation / 100,
      };
    });
    return {
      chainId: c.chainId,
      rpcUrl: c.rpcUrl,
      rpcUrls: [c.rpcUrl, ...(c.fallbackRpcUrls ?? [])],
      rpcLimits: c.rpcLimits ?? {},
      confirmations: c.confirmations ?? 0,
      rpcTimeoutMs: c.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
      syncBlocks: c.syncBlocks ?? DEFAULT_SYNC_BLOCKS,
      stateMaxAgeSeconds: c.stateMaxAgeSeconds ?? DEFAULT_STATE_MAX_AGE_SECONDS,
      morpho,
      aave,
      compound,
      euler: c.euler
        ? {
            evc: c.euler.evc.toLowerCase(),
            factory: c.euler.factory?.toLowerCase() ?? null,
            fromBlock: c.euler.fromBlock ?? null,
          }
        : null,
      fluid,
      chainlink,
    };
  });
  const api = file.morphoApi;
  api?.chainIds.forEach((id, j) => {
    if (api.chainIds.indexOf(id) !== j) problems.push(`morphoApi.chainIds[${j}]: duplicate ${id}`);
  });
  if (problems.length > 0) throw new SourcesConfigError(source, problems);
  return {
    chains,
    morphoApi: api
      ? { url: api.url, chainIds: [...new Set(api.chainIds)], pageSize: api.pageSize ?? MORPHO_API_PAGE_SIZE }
      : null,
  };
}

/**
 * MetaMorpho v1.0's factory, on the chains it was deployed on (Morpho's address book names v1.1's
 * only): its vaults have v1.1's views and events. Read from Blue's deployment (it came later).
 */
const METAMORPHO_V1_0_FACTORY: Readonly<Record<number, string>> = {
  1: '0xa9c3d3a366466fa809d1ae982fb2c46e5fc41101',
  8453: '0xa9c3d3a366466fa809d1ae982fb2c46e5fc41101',
};

/**
 * Morpho Blue's address on a chain its address book knows, and its MetaMorpho factories (v1.0's
 * where deployed, v1.1's), lower-case, each with the block it is read from.
 */
function knownMorpho(chainId: number): {
  blue: string;
  fromBlock: number;
  vaultFactories: { address: string; fromBlock: number }[];
} | null {
  try {
    const book = getChainAddresses(chainId) as { morpho?: string; metaMorphoFactory?: string };
    const blocks = (
      deployments as Record<number, { morpho?: bigint; metaMorphoFactory?: bigint } | undefined>
    )[chainId];
    if (!book.morpho) return null;
    const fromBlock = Number(blocks?.morpho ?? 0n);
    const v10 = METAMORPHO_V1_0_FACTORY[chainId];
    return {
      blue: book.morpho,
      fromBlock,
      vaultFactories: [
        ...(v10 ? [{ address: v10, fromBlock }] : []),
        ...(book.metaMorphoFactory
          ? [
              {
                address: book.metaMorphoFactory.toLowerCase(),
                fromBlock: Number(blocks?.metaMorphoFactory ?? blocks?.morpho ?? 0n),
              },
            ]
          : []),
      ],
    };
  } catch {
    return null;
  }
}

/** A comet of the shipped reference data (with its rewards contract), read on its chain when the file names none. */
export interface KnownComet {
  chainId: number;
  comet: string;
  rewards?: string | null;
}

/** A pool of the shipped reference data, read on its chain when the file names none. */
export interface KnownPool {
  chainId: number;
  protocol: 'aave' | 'spark';
  pool: string;
}

/** Reads and validates the file named by SOURCES_FILE. */
export function loadSources(
  file: string,
  feeds: readonly RefChainlinkFeed[] = [],
  comets: readonly KnownComet[] = [],
  pools: readonly KnownPool[] = [],
): SourcesConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SourcesConfigError(file, [`cannot read the file: ${(err as Error).message}`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new SourcesConfigError(file, [`not JSON: ${(err as Error).message}`]);
  }
  return parseSources(json, file, feeds, comets, pools);
}
