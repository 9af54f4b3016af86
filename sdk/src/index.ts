export {
  type ClientOptions,
  type FetchLike,
  type Item,
  type ListOperation,
  LrdsClient,
  type Market,
  type Meta,
  type OperationId,
  type PositionAtRisk,
  type Query,
  type RequestOptions,
  type Success,
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
