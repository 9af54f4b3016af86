import type { Area } from '../types.ts';
import { registerVaultDetail } from './detail.ts';
import { registerVaultsList } from './list.ts';
import { VaultSchema } from './schemas.ts';

/** Vaults: list and one vault (category core). */
export const vaults: Area = {
  scope: 'data',
  tag: {
    name: 'Vaults',
    description: 'Morpho and Euler vaults and their allocations (core category).',
  },
  schemas: { Vault: VaultSchema },
  register(app, deps) {
    registerVaultsList(app, deps);
    registerVaultDetail(app, deps);
  },
};
