/** The chain sources of a sources file (D15): one `chain:<chainId>` source per chain. */
import type { Transport } from 'viem';
import { loadReference } from '../sandbox/reference.ts';
import { loadSources, type SourcesConfig } from '../sources-file.ts';
import { createChainRpc } from './rpc.ts';
import { type ChainSource, chainSource } from './source.ts';

export function chainSources(
  config: SourcesConfig,
  options: { transport?: (chainId: number) => Transport } = {},
): ChainSource[] {
  const data = loadReference();
  const reference = { feeds: data.chainlinkFeeds, tokens: data.tokens };
  return config.chains.map((chain) =>
    chainSource(
      chain,
      createChainRpc(
        chain.chainId,
        chain.rpcUrl,
        options.transport ? { transport: options.transport(chain.chainId) } : {},
      ),
      reference,
    ),
  );
}

/** Reads and validates the sources file (every problem listed), with the reference feeds' heartbeats. */
export function loadSourcesFile(file: string): SourcesConfig {
  const reference = loadReference();
  return loadSources(file, reference.chainlinkFeeds, reference.comets);
}
