export {
  type ClientOptions,
  type FetchLike,
  type Item,
  type Liquidation,
  type ListOperation,
  LrdsClient,
  type Market,
  type MarketHistoryPoint,
  type Meta,
  type OperationId,
  type Oracle,
  type OracleDetail,
  type OracleRound,
  type Portfolio,
  type Position,
  type PositionAtRisk,
  type Query,
  type RequestOptions,
  type Success,
  type Token,
  type TokenDetail,
  type Vault,
} from './client.ts';
export {
  type ErrorBody,
  type ErrorCode,
  isApiError,
  LrdsApiError,
  LrdsError,
  LrdsResponseError,
} from './errors.ts';
export type { RetryOptions } from './retry.ts';
export type { components, operations, paths } from './schema.ts';
