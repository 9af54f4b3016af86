/**
 * The sandbox's market simulation: price paths with crash days and depegs (price-model.ts)
 * and the oracle rounds feeds would have posted over them (oracle-rounds.ts). Pure functions of
 * the seed, asOf and the time asked: no clock, no I/O, no store.
 */

export { maturityFromSymbol } from '../prices.ts';
export {
  createOracleSimulator,
  type FeedSpec,
  type OracleRound,
  type OracleSimulator,
} from './oracle-rounds.ts';
export { createPriceModel, type PriceModel, type SimAsset } from './price-model.ts';
