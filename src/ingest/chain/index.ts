/** The sources of a sources file (docs/decisions.md "Real sources"): one `chain:<chainId>` source per chain, and the Morpho API's. */
import type { Transport } from 'viem';
import { type FetchFn, morphoApiSource } from '../api/morpho-api.ts';
import type { Source } from '../contract.ts';
import { loadReference, type ReferenceData } from '../sandbox/reference.ts';
import { type KnownPool, loadSources, type SourcesConfig } from '../sources-file.ts';
import { createChainRpc } from './rpc.ts';
import { type ChainSource, type ChainSourceOptions, chainSource } from './source.ts';

/** The chain sources of a sources file: one `chain:<chainId>` source per chain. */
export function chainSources(
  config: SourcesConfig,
  options: { transport?: (chainId: number) => Transport } & ChainSourceOptions = {},
): ChainSource[] {
  const data = loadReference();
  const reference = { feeds: data.chainlinkFeeds, tokens: data.tokens };
  return config.chains.map((chain) =>
    chainSource(
      chain,
      createChainRpc(
        chain.chainId,
        chain.rpcUrls,
        options.transport
          ? { transport: options.transport(chain.chainId) }
          : { limits: { ...chain.rpcLimits, timeoutMs: chain.rpcTimeoutMs } },
      ),
      reference,
      options,
    ),
  );
}

/**
 * Every source of a sources file (docs/decisions.md "Real sources"): its chains' (`chain:<chainId>`) and the Morpho API's
 * (`morpho-api`), when it names one.
 */
export function configuredSources(
  config: SourcesConfig,
  options: { transport?: (chainId: number) => Transport; fetch?: FetchFn } = {},
): Source[] {
  const sources: Source[] = chainSources(config, options);
  if (config.morphoApi) {
    const onChainMorpho = new Set(config.chains.filter((c) => c.morpho !== null).map((c) => c.chainId));
    const onChainVaults = new Set(
      config.chains.filter((c) => (c.morpho?.vaultFactories.length ?? 0) > 0).map((c) => c.chainId),
    );
    sources.push(morphoApiSource(config.morphoApi, { onChainMorpho, onChainVaults, fetch: options.fetch }));
  }
  return sources;
}

/** The Aave v3 and SparkLend pools of the shipped reference data (read on a chain whose file names none). */
export function knownPools(reference: ReferenceData): KnownPool[] {
  return [
    ...reference.aaveMarkets.map((m) => ({ chainId: m.chainId, protocol: 'aave' as const, pool: m.pool })),
    {
      chainId: reference.spark.market.chainId,
      protocol: 'spark' as const,
      pool: reference.spark.market.pool,
    },
  ];
}

/** Reads and validates the sources file (every problem listed), with the reference feeds' heartbeats. */
export function loadSourcesFile(file: string): SourcesConfig {
  const reference = loadReference();
  return loadSources(file, reference.chainlinkFeeds, reference.comets, knownPools(reference));
}
