import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { VaultRead } from '../../src/ingest/chain/metamorpho.ts';
import { metaMorphoRecord } from '../../src/ingest/chain/metamorpho-records.ts';

const ID = `0x${'ab'.repeat(32)}`;

/** A vault of 1,000 USDC parked in one market that no pass reads as a lending market. */
function vault(): VaultRead {
  return {
    address: `0x${'01'.repeat(20)}`,
    asset: { address: `0x${'02'.repeat(20)}`, symbol: 'USDC', name: 'USD Coin', decimals: 6 },
    name: 'Vault',
    symbol: 'V',
    curator: null,
    owner: `0x${'03'.repeat(20)}`,
    guardian: null,
    feeRecipient: null,
    fee: 0n,
    timelock: 0n,
    pendingTimelock: { value: 0n, validAt: 0n },
    pendingGuardian: { value: `0x${'00'.repeat(20)}`, validAt: 0n },
    supplyQueue: [ID],
    withdrawQueue: [ID],
    markets: new Map([
      [
        ID,
        {
          cap: 10n ** 12n,
          enabled: true,
          removableAt: 0n,
          pendingCap: 0n,
          pendingCapValidAt: 0n,
          supplyShares: 10n ** 15n,
          totalSupplyAssets: 10n ** 9n,
          totalSupplyShares: 10n ** 15n,
        },
      ],
    ]),
    lostAssets: null,
    block: 100,
  };
}

test('behavior: a market the chain source knows as idle is the vault’s idle supply; one it does not know yet (a sync under way) leaves the vault unstated', () => {
  const idle = metaMorphoRecord(1, vault(), new Map(), new Set(), () => true);
  assert.ok(typeof idle !== 'string');
  assert.deepEqual(idle.allocations, [], 'an idle market is no allocation');
  const governance = idle.governance as { totalAssets: number; idleAssets: number };
  assert.ok(Math.abs(governance.idleAssets - 1000) < 0.01, 'but its supply is the vault’s');
  assert.equal(governance.totalAssets, governance.idleAssets);
  const unknown = metaMorphoRecord(1, vault(), new Map(), new Set(), () => false);
  assert.equal(typeof unknown, 'string');
  assert.match(unknown as string, /is not known yet/);
});
