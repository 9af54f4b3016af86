import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';

/** The Fastify instance routes are registered on, typed by their TypeBox schemas. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** Errors every authenticated data route can return (drift-tested against the OpenAPI document). */
export const AUTHENTICATED_ERRORS = [
  'UNAUTHORIZED',
  'TIER_FORBIDDEN',
  'RATE_LIMIT_EXCEEDED',
  'DAILY_QUOTA_EXCEEDED',
  'MONTHLY_QUOTA_EXCEEDED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

/**
 * Errors of the client self-service routes: rate limited, never counted, open to every tier;
 * an unknown query parameter is 400 on every one of them.
 */
export const CLIENT_ERRORS = [
  'INVALID_PARAMETER',
  'UNAUTHORIZED',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;
