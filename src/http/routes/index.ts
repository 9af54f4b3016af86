import type { onRequestAsyncHookHandler } from 'fastify';
import { MemoryPageSnapshots } from '../../data/page-snapshots.ts';
import { AnswerCache } from '../answer-cache.ts';
import type { AppDeps, RouteDeps } from '../context.ts';
import type { ErrorCode } from '../errors.ts';
import { CLIENT_HEADERS, errorResponses } from '../schemas.ts';
import { type Api, type Area, AUTHENTICATED_ERRORS, CLIENT_ERRORS } from './types.ts';

/** The key a route of an authenticated scope needs: an API key in `Authorization: Bearer`. */
const BEARER_AUTH = [{ bearerAuth: [] }];

/**
 * What every route of an authenticated scope documents without stating it: the key it needs,
 * and the errors it can answer: its own (`config.errors`), CHAIN_FORBIDDEN when its access
 * names a chain (`access.chainParam`), then those of every route of the scope (`common`).
 */
function documentAuthenticated(scope: Api, common: readonly ErrorCode[]): void {
  scope.addHook('onRoute', (route) => {
    const schema = route.schema;
    if (!schema) return;
    schema.security ??= BEARER_AUTH;
    const own: ErrorCode[] = [
      ...(route.config?.access?.chainParam ? (['CHAIN_FORBIDDEN'] as const) : []),
      ...(route.config?.errors ?? []),
    ];
    schema.response = { ...(schema.response as object), ...errorResponses([...own, ...common]) };
  });
}

/** Registers `area` in a scope of its own, whose routes the document lists under the area's tag. */
async function registerArea(parent: Api, area: Area, deps: RouteDeps): Promise<void> {
  await parent.register(async (scope: Api) => {
    scope.addHook('onRoute', (route) => {
      if (route.schema) route.schema.tags ??= [area.tag.name];
    });
    area.register(scope, deps);
  });
}

/**
 * Every route of /api/v1, from the list of areas (routes/areas.ts), by scope: the public areas
 * need no key; the others are behind `access` (the access pipeline: authenticate, rate limit,
 * quotas, category and chain access), each route declaring its access in its `config.access`.
 */
export async function registerRoutes(
  v1: Api,
  areas: readonly Area[],
  appDeps: AppDeps,
  access: onRequestAsyncHookHandler,
): Promise<void> {
  const deps: RouteDeps = {
    ...appDeps,
    answers: appDeps.answers ?? new AnswerCache(),
    pageSnapshots: appDeps.pageSnapshots ?? new MemoryPageSnapshots(appDeps.clock),
  };
  const inScope = (scope: Area['scope']) => areas.filter((area) => area.scope === scope);
  for (const area of inScope('public')) await registerArea(v1, area, deps);

  await v1.register(async (authed: Api) => {
    authed.addHook('onRequest', access);
    // A route that takes `limit` states its maximum once, in its access declaration.
    authed.addHook('onRoute', (route) => {
      const query = route.schema?.querystring as { properties?: Record<string, unknown> } | undefined;
      if (query?.properties?.limit && route.config?.access?.limitMax === undefined) {
        throw new Error(`${route.method} ${route.url} takes limit but declares no access.limitMax`);
      }
    });
    await authed.register(async (data: Api) => {
      documentAuthenticated(data, AUTHENTICATED_ERRORS);
      for (const area of inScope('data')) await registerArea(data, area, deps);
    });
    // Client self-service: account data, never stored by caches.
    await authed.register(async (client: Api) => {
      client.addHook('onSend', async (_request, reply) => {
        reply.header('cache-control', 'no-store');
      });
      documentAuthenticated(client, CLIENT_ERRORS);
      // Their successes carry these headers (and any of their own); documented here for all of them.
      client.addHook('onRoute', (route) => {
        const responses = route.schema?.response as Record<string, Record<string, unknown>> | undefined;
        if (!responses) return;
        for (const [code, schema] of Object.entries(responses)) {
          if (!code.startsWith('2')) continue;
          responses[code] = {
            ...schema,
            description: schema.description ?? `${route.schema?.summary ?? 'Success'}.`,
            headers: { ...CLIENT_HEADERS, ...(schema.headers as object | undefined) },
          };
        }
      });
      for (const area of inScope('client')) await registerArea(client, area, deps);
    });
  });
}
