import type { Area } from '../types.ts';
import { registerMarketRatingDetail } from './market-detail.ts';
import { registerMarketRatingHistory } from './market-history.ts';
import { registerMarketRatingsList } from './markets-list.ts';
import { registerRatingMethodology } from './methodology.ts';
import {
  MarketRatingSchema,
  RatingChangeSchema,
  RatingMethodologySchema,
  VaultRatingSchema,
} from './schemas.ts';
import { registerVaultRatingDetail } from './vault-detail.ts';
import { registerVaultRatingHistory } from './vault-history.ts';
import { registerVaultRatingsList } from './vaults-list.ts';

/** Ratings of markets and vaults, their history and the methodology (category ratings): one file per endpoint. */
export const ratings: Area = {
  scope: 'data',
  tag: {
    name: 'Ratings',
    description:
      'Credit ratings of markets and vaults (AAA to D, a 0-100 score, component scores with why), their ' +
      'history and the versioned methodology (ratings category).',
  },
  schemas: {
    MarketRating: MarketRatingSchema,
    VaultRating: VaultRatingSchema,
    RatingChange: RatingChangeSchema,
    RatingMethodology: RatingMethodologySchema,
  },
  register(app, deps) {
    registerMarketRatingsList(app, deps);
    registerMarketRatingDetail(app, deps);
    registerMarketRatingHistory(app, deps);
    registerVaultRatingsList(app, deps);
    registerVaultRatingDetail(app, deps);
    registerVaultRatingHistory(app, deps);
    registerRatingMethodology(app, deps);
  },
};
