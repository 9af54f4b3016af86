import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { BackendUnavailableError } from '../../access/admission.ts';
import { QueryError } from '../../queries/errors.ts';
import { StoreWriteError } from '../../store/write-health.ts';
import { ApiError, invalidParameter, type ParameterProblem } from '../errors.ts';
import { errorResponses } from '../schemas.ts';
import { API_PREFIX } from './openapi.ts';

/**
 * Every error in the documented shape (docs/decisions.md "Errors"): validation problems one per parameter,
 * 404 for unknown paths and 405 with Allow for a wrong method on a known one, 503 for a backend
 * briefly unavailable or a store that cannot write (a full disk), 500 with the request id for anything unexpected (logged). Numbers that
 * AJV coerces to Infinity are refused, and bodies are JSON only (415 otherwise).
 */

export interface AjvError {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Turns AJV errors into "Errors" (docs/decisions.md) details: one entry per parameter, in words a client can act on. */
export function problemsOf(errors: readonly AjvError[], dataVar: string): ParameterProblem[] {
  const out = new Map<string, string>();
  for (const e of errors) {
    let parameter = e.instancePath.replace(/^\//, '').replace(/\//g, '.');
    let problem = e.message ?? 'is invalid';
    if (e.keyword === 'additionalProperties') {
      parameter = String(e.params.additionalProperty);
      problem = 'is not a known parameter';
    } else if (e.keyword === 'required') {
      parameter = String(e.params.missingProperty);
      problem = 'is required';
    } else if (e.keyword === 'enum') {
      problem = `must be one of: ${(e.params.allowedValues as unknown[]).join(', ')}`;
    } else if (e.keyword === 'type') {
      const type = String(e.params.type);
      problem = `must be ${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
    } else if (e.keyword === 'pattern') {
      problem = 'is not in the expected format';
    }
    if (!parameter) parameter = dataVar;
    if (!out.has(parameter)) out.set(parameter, problem);
  }
  return [...out].map(([parameter, problem]) => ({ parameter, problem }));
}

/** Retry-After (s) of a request refused because the store cannot write (a full disk is not freed in a second). */
const STORE_WRITE_RETRY_AFTER_S = 30;

export function sendError(reply: FastifyReply, err: ApiError): void {
  // An error is about this request only: no cache keeps it (a data route may have set its own).
  reply.header('cache-control', 'no-store');
  reply.removeHeader('etag');
  for (const [k, v] of Object.entries(err.headers)) reply.header(k, v);
  reply.code(err.status).send(err.body());
}

/** Routing failures (bad percent-encoding in the path, a segment over maxParamLength): Fastify's frameworkErrors. */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Hooks do not run for these: set what the hooks would have set.
  reply.header('x-request-id', request.id);
  reply.header('x-content-type-options', 'nosniff');
  reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
  reply.header('access-control-allow-origin', '*');
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'has a segment that is too long' : 'is not a valid URL path';
  sendError(reply, invalidParameter([{ parameter: 'path', problem }]));
}

/** The routes of the app by path pattern, to tell a wrong method on a known path (405) from an unknown path (404). */
function routeTable() {
  const byPattern = new Map<string, { re: RegExp; methods: Set<string> }>();
  return {
    add(method: string | string[], url: string) {
      let entry = byPattern.get(url);
      if (!entry) {
        const source = url
          .split('/')
          .map((seg) => (seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/');
        entry = { re: new RegExp(`^${source}$`), methods: new Set() };
        byPattern.set(url, entry);
      }
      for (const m of Array.isArray(method) ? method : [method]) entry.methods.add(m);
    },
    /** The methods some route accepts on this concrete path, sorted; empty when no route has the path. */
    methodsOf(path: string): string[] {
      const out = new Set<string>();
      for (const { re, methods } of byPattern.values())
        if (re.test(path)) for (const m of methods) out.add(m);
      if (out.size > 0) out.add('OPTIONS');
      return [...out].sort();
    },
  };
}

export const errorsPlugin = fp(
  async (app: FastifyInstance) => {
    const routes = routeTable();
    app.addHook('onRoute', (route) => {
      routes.add(route.method, route.url);
      // What any route can answer whatever it declares (a body too large or not JSON, a
      // malformed one, an unexpected failure, overload or shutdown): documented on every one.
      const schema = route.schema as { hide?: boolean; response?: Record<string, unknown> } | undefined;
      if (schema && !schema.hide) {
        // Also: another method on the path (405, before authentication), a request too slow or
        // with headers too large (408, 431, answered before routing), and the budget of
        // anonymous requests (429) on routes that need no key.
        const any = errorResponses([
          'INVALID_PARAMETER',
          'METHOD_NOT_ALLOWED',
          'REQUEST_TIMEOUT',
          'PAYLOAD_TOO_LARGE',
          'UNSUPPORTED_MEDIA_TYPE',
          'HEADERS_TOO_LARGE',
          'RATE_LIMIT_EXCEEDED',
          'INTERNAL_ERROR',
          'SERVICE_UNAVAILABLE',
        ]);
        schema.response ??= {};
        for (const [status, r] of Object.entries(any)) schema.response[status] ??= r;
      }
    });
    // AJV coerces 'Infinity' and '1e400' to Infinity and then skips its range checks: refuse them.
    app.addHook('preHandler', async (request) => {
      for (const source of [request.query, request.params]) {
        if (source === null || typeof source !== 'object') continue;
        for (const [parameter, value] of Object.entries(source)) {
          if (typeof value === 'number' && !Number.isFinite(value)) {
            throw invalidParameter([{ parameter, problem: 'must be a finite number' }]);
          }
        }
      }
    });
    // Bodies are JSON only: anything else is 415 UNSUPPORTED_MEDIA_TYPE.
    app.removeContentTypeParser('text/plain');
    app.setErrorHandler((error: FastifyError | ApiError | QueryError, request, reply) => {
      if (error instanceof ApiError) return sendError(reply, error);
      if (error instanceof QueryError) {
        return sendError(
          reply,
          error.code === 'INVALID_PARAMETER' && error.detail
            ? invalidParameter([error.detail])
            : new ApiError(error.code, error.message),
        );
      }
      if (error instanceof BackendUnavailableError) {
        request.log.warn({ err: error.message }, 'backend unavailable');
        return sendError(
          reply,
          new ApiError(
            'SERVICE_UNAVAILABLE',
            'A backend is briefly unavailable; retry shortly.',
            {},
            { 'retry-after': '1' },
          ),
        );
      }
      if (error instanceof StoreWriteError) {
        // Named once by the store's write health (logged when writes start failing and when
        // they work again): not logged per request.
        return sendError(
          reply,
          new ApiError(
            'SERVICE_UNAVAILABLE',
            'The service cannot store this change right now; nothing was changed. Retry later.',
            {},
            { 'retry-after': String(STORE_WRITE_RETRY_AFTER_S) },
          ),
        );
      }
      const status = error.statusCode ?? 500;
      if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
        return sendError(reply, new ApiError('PAYLOAD_TOO_LARGE', 'Request body is too large.'));
      }
      if (error.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
        return sendError(
          reply,
          new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.'),
        );
      }
      if (status >= 400 && status < 500) {
        // Fastify's own client errors: malformed JSON body, bad encoding in the URL, and the like.
        return sendError(
          reply,
          invalidParameter([
            {
              parameter:
                error.code === 'FST_ERR_CTP_INVALID_JSON_BODY' || error.code?.startsWith('FST_ERR_CTP')
                  ? 'body'
                  : 'request',
              problem: error.message,
            },
          ]),
        );
      }
      request.log.error({ err: error }, 'unexpected error');
      return sendError(
        reply,
        new ApiError('INTERNAL_ERROR', `An unexpected error occurred. Request id: ${request.id}`),
      );
    });

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split('?')[0] ?? '';
      const allowed = routes.methodsOf(path);
      if (allowed.length > 0) {
        const allow = allowed.join(', ');
        return sendError(
          reply,
          new ApiError(
            'METHOD_NOT_ALLOWED',
            `${request.method} is not allowed on ${path.slice(0, 200)}; use ${allow}.`,
            {},
            { allow },
          ),
        );
      }
      // A path of the API without its prefix (`/health`, `/markets`): the message names it.
      const prefixed = `${API_PREFIX}${path}`;
      const hint =
        !path.startsWith(`${API_PREFIX}/`) && routes.methodsOf(prefixed).includes(request.method)
          ? ` The API is under ${API_PREFIX}: ${request.method} ${prefixed.slice(0, 200)}.`
          : '';
      sendError(reply, new ApiError('NOT_FOUND', `No route ${request.method} ${path.slice(0, 200)}.${hint}`));
    });
  },
  { name: 'lrds-errors' },
);
