import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TSchema } from 'typebox';
import type { RouteDeps } from '../context.ts';

/** The Fastify instance routes are registered on, typed by their TypeBox schemas. */
export type Api = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/**
 * Errors every authenticated data route can return (drift-tested against the OpenAPI document):
 * documented on each by its scope (routes/index.ts).
 */
export const AUTHENTICATED_ERRORS = [
  'INVALID_PARAMETER',
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
 * an unknown query parameter is 400 on every one of them. Documented on each by its scope.
 */
export const CLIENT_ERRORS = [
  'INVALID_PARAMETER',
  'UNAUTHORIZED',
  'RATE_LIMIT_EXCEEDED',
  'INTERNAL_ERROR',
  'SERVICE_UNAVAILABLE',
] as const;

/** An OpenAPI tag: the group of an area's operations in the document and on the docs page. */
export interface Tag {
  name: string;
  description: string;
}

/**
 * An area of the API: its routes, its OpenAPI tag and its named schemas, listed once in
 * routes/areas.ts. Its routes are registered in a scope of its own, which lists them under its
 * tag, inside the scope its `scope` names: `public` (no key), `data` (the access pipeline; each
 * route documents the key it needs and AUTHENTICATED_ERRORS) or `client` (the access pipeline,
 * self-service: never counted, never cached; CLIENT_ERRORS).
 */
export interface Area {
  scope: 'public' | 'data' | 'client';
  tag: Tag;
  /** Schemas named in the document's components.schemas, which its routes reference (`ref`). */
  schemas?: Record<string, TSchema>;
  register(app: Api, deps: RouteDeps): void;
}
