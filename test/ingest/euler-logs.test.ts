import assert from 'node:assert/strict';
import { test } from 'node:test';
import { EulerCache, eulerLogAddresses } from '../../src/ingest/chain/euler.ts';

test('behavior: a collateral a vault lists is followed only when it answered asset(): a plain token is not', () => {
  const cache = new EulerCache();
  const [evc, vault, realCollateral, usdc] = ['0xe', '0xv', '0xc', '0xusdc'];
  // Anyone may create a vault listing USDC (thousands of Transfer logs a block) as its collateral.
  cache.vaults.set(vault, [realCollateral, usdc]);
  cache.assetOf.set(realCollateral, '0xweth');
  cache.assetOf.set(usdc, null);
  const known = { controllers: [vault], accounts: [] };
  assert.deepEqual(eulerLogAddresses(evc, known, cache).sort(), [evc, realCollateral, vault].sort());
  // before its served controller has read it, a collateral is not followed either
  cache.assetOf.delete(realCollateral);
  assert.deepEqual(eulerLogAddresses(evc, known, cache).sort(), [evc, vault].sort());
});
