/**
 * The sandbox's market simulation: price paths with crash days and depegs (price-model.ts)
 * and the oracle rounds feeds would have posted over them (oracle-rounds.ts). Pure functions of
 * the seed, asOf and the time asked: no clock, no I/O, no store.
 */
export { type CrashEvent, crashSchedule } from './crashes.ts';
export {
  CHECK_STEP_MS,
  createOracleSimulator,
  FEED_OUTAGES,
  type FeedSpec,
  type OracleRound,
  type OracleSimulator,
  type StaleWindow,
} from './oracle-rounds.ts';
export {
  createPriceModel,
  type HourlyPrices,
  maturityFromSymbol,
  type PriceEvent,
  type PriceModel,
  type PriceModelOptions,
  type PtMaturity,
  type SimAsset,
} from './price-model.ts';
