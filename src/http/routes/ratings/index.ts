import type { AppDeps } from '../../context.ts';
import type { Api } from '../types.ts';
import { registerMarketRatingDetail } from './market-detail.ts';
import { registerMarketRatingHistory } from './market-history.ts';
import { registerMarketRatingsList } from './markets-list.ts';
import { registerRatingMethodology } from './methodology.ts';
import { registerVaultRatingDetail } from './vault-detail.ts';
import { registerVaultRatingHistory } from './vault-history.ts';
import { registerVaultRatingsList } from './vaults-list.ts';

/** The ratings area (category `ratings`, DECISIONS D8): one file per endpoint. */
export function registerRatingRoutes(app: Api, deps: AppDeps): void {
  registerMarketRatingsList(app, deps);
  registerMarketRatingDetail(app, deps);
  registerMarketRatingHistory(app, deps);
  registerVaultRatingsList(app, deps);
  registerVaultRatingDetail(app, deps);
  registerVaultRatingHistory(app, deps);
  registerRatingMethodology(app, deps);
}
