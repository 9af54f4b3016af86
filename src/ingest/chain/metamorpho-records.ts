/**
 * A MetaMorpho vault's record from its last read (metamorpho.ts) at the pass's market states:
 * each enabled market it supplies or may supply is an allocation (its share of the market's
 * supply shares, its cap in units of the asset), its total assets its shares valued at each
 * market's state now (MetaMorpho's realTotalAssets: idle markets at their totals when read), and
 * what its contract holds pending.
 */
import { type Market, SharesMath } from '@morpho-org/blue-sdk';
import type { MorphoVaultGovernance, VaultRecord } from '../../domain/types.ts';
import { morphoKey, NO_CAP } from '../records.ts';
import { scaled } from './chainlink.ts';
import type { VaultRead } from './metamorpho.ts';
import { tokenText } from './tokens.ts';

/**
 * The vault's record, or why it cannot be stated this pass: one of its markets that a pass reads
 * (one with a collateral) was not read (`failed`), so its share there is unknown, or is not
 * known yet (`known` false: a sync's logs have not reached its creation), so it cannot be told
 * from an idle one.
 */
export function metaMorphoRecord(
  chainId: number,
  v: VaultRead,
  read: ReadonlyMap<string, Market>,
  failed: ReadonlySet<string>,
  known: (id: string) => boolean,
): VaultRecord | string {
  const decimals = v.asset.decimals ?? 18;
  const amount = (x: bigint) => scaled(x, decimals);
  const key = (id: string) => morphoKey(chainId, id);
  const allocations: VaultRecord['allocations'] = [];
  let total = 0n;
  let idle = 0n;
  for (const id of v.withdrawQueue) {
    const m = v.markets.get(id);
    if (!m) return `its market ${key(id)} was not read`;
    if (failed.has(id)) return `its market ${key(id)} could not be read this pass`;
    if (!known(id)) return `its market ${key(id)} is not known yet (its creation is past the logs read)`;
    const market = read.get(id);
    // A market no pass reads (idle: no collateral, no borrower) is valued at its totals when read:
    // it accrues no interest. It is no allocation (it holds no borrower's risk) but is the vault's.
    if (!market) {
      const parked = SharesMath.toAssets(m.supplyShares, m.totalSupplyAssets, m.totalSupplyShares, 'Down');
      idle += parked;
      total += parked;
      continue;
    }
    total += market.toSupplyAssets(m.supplyShares);
    if (m.supplyShares === 0n && m.cap === 0n) continue;
    allocations.push({
      marketKey: key(id),
      supplyShare:
        market.totalSupplyShares > 0n
          ? Math.min(1, Number((m.supplyShares * 10n ** 18n) / market.totalSupplyShares) / 1e18)
          : 0,
      supplyCap: m.cap >= NO_CAP ? null : amount(m.cap),
    });
  }
  const pendingCaps: MorphoVaultGovernance['pendingCaps'] = [];
  const pendingRemovals: MorphoVaultGovernance['pendingRemovals'] = [];
  for (const [id, m] of v.markets) {
    if (m.pendingCapValidAt > 0n)
      pendingCaps.push({
        marketKey: key(id),
        cap: m.pendingCap >= NO_CAP ? null : amount(m.pendingCap),
        validAt: Number(m.pendingCapValidAt),
      });
    if (m.removableAt > 0n) pendingRemovals.push({ marketKey: key(id), removableAt: Number(m.removableAt) });
  }
  return {
    protocol: 'morpho',
    chainId,
    address: v.address,
    name: tokenText(v.name, 64),
    symbol: tokenText(v.symbol, 32),
    assetAddress: v.asset.address,
    assetSymbol: v.asset.symbol,
    curator: v.curator,
    governor: null,
    fee: Number(v.fee) / 1e18,
    allocations,
    governance: {
      owner: v.owner,
      guardian: v.guardian,
      feeRecipient: v.feeRecipient,
      timelockSeconds: Number(v.timelock),
      supplyQueue: v.supplyQueue.map(key),
      withdrawQueue: v.withdrawQueue.map(key),
      totalAssets: amount(total),
      idleAssets: amount(idle),
      lostAssets: v.lostAssets === null ? null : amount(v.lostAssets),
      pendingCaps,
      pendingRemovals,
      pendingTimelock:
        v.pendingTimelock.validAt > 0n
          ? { seconds: Number(v.pendingTimelock.value), validAt: Number(v.pendingTimelock.validAt) }
          : null,
      pendingGuardian:
        v.pendingGuardian.validAt > 0n
          ? {
              guardian:
                v.pendingGuardian.value === '0x0000000000000000000000000000000000000000'
                  ? null
                  : v.pendingGuardian.value,
              validAt: Number(v.pendingGuardian.validAt),
            }
          : null,
      block: v.block,
    },
  };
}
