import type { Source, SourceOutput } from '../contract.ts';
import { DEFAULT_SEED, generateSandbox, type SandboxProfile } from './index.ts';

/** The sandbox as a source: one run generates its whole dataset from the profile and seed. */
export function sandboxSource(profile: SandboxProfile, seed: number = DEFAULT_SEED): Source {
  const ds = generateSandbox({ profile, seed });
  const chainIds = [...new Set(ds.markets.map((m) => m.chainId))].sort((a, b) => a - b);
  return {
    id: 'sandbox',
    kind: 'simulation',
    chainIds,
    async run(): Promise<SourceOutput> {
      return {
        snapshot: {
          kind: 'sandbox',
          profile,
          seed,
          markets: ds.markets,
          vaults: ds.vaults,
          positions: ds.positions(),
          positionCount: ds.positionCount,
        },
        items: [{ id: `sandbox:${profile}:${seed}`, ok: true }],
      };
    },
  };
}
