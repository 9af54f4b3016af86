import type { Area } from '../types.ts';
import { registerMarketDetail } from './detail.ts';
import { registerMarketHistory } from './history.ts';
import { registerMarketsList } from './list.ts';
import { MarketHistoryPointSchema, MarketSchema } from './schemas.ts';
import { registerMarketsSearch } from './search.ts';

/** Markets: list, search, one market and its history (category core). */
export const markets: Area = {
  scope: 'data',
  tag: {
    name: 'Markets',
    description: 'Lending markets and their history (core category).',
  },
  schemas: { Market: MarketSchema, MarketHistoryPoint: MarketHistoryPointSchema },
  register(app, deps) {
    registerMarketsSearch(app, deps);
    registerMarketsList(app, deps);
    registerMarketDetail(app, deps);
    registerMarketHistory(app, deps);
  },
};
