import { Type } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { tierAllowsCategory } from '../../../access/tiers.ts';
import type { ReadModel } from '../../../data/read-model.ts';
import { duplicateId, mcpEndpoint, toolCallProblem } from '../../../mcp/server.ts';
import type { JsonObject, Rendering } from '../../../mcp/tool.ts';
import { TOOLS } from '../../../mcp/tools/index.ts';
import type { RouteDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { dataMeta } from '../../envelope.ts';
import { ApiError, invalidParameter } from '../../errors.ts';
import {
  type Admitted,
  admitRequest,
  authorize,
  refusedAdmission,
  setRateHeaders,
} from '../../plugins/access.ts';
import { API_VERSION } from '../../plugins/openapi.ts';
import { CACHE_HEADERS, RATE_HEADERS, REQUEST_ID_HEADER } from '../../schemas.ts';
import { JSON_TYPE, marketJson, positionJson } from '../../serialize.ts';
import type { Api } from '../types.ts';

/**
 * POST /agent/mcp: the MCP server (src/mcp/), over Streamable HTTP, stateless. The request goes
 * through the access pipeline in the order of every route (authenticated, rate limit, quotas,
 * the `agent` category), but what is admitted depends on its body: each tool call is one
 * request of the API, so a request carrying tool calls is admitted as its first one (one slot,
 * counted; the MCP server admits the others of a batch), and a request carrying none
 * (initialize, ping, tools/list, notifications) takes one slot, not counted. The answer goes out
 * through Fastify (security headers, request id, compression, the rate headers of the last
 * admission); what the MCP transport refuses is answered in the API's error shape.
 */

const ACCESS = { category: 'agent', counted: false, admittedByRoute: true } as const;

/** The first `tools/call` of a message (or batch) naming a tool of the server, as sent: not yet validated. */
function firstToolCall(body: unknown): string | null {
  // A batch refused whole (an id twice) runs nothing, so counts nothing.
  if (duplicateId(body) !== null) return null;
  for (const message of Array.isArray(body) ? body : [body]) {
    if (typeof message !== 'object' || message === null || message.method !== 'tools/call') continue;
    // No tool call at all (params of the wrong shape): answered -32602, never run, not counted.
    if (toolCallProblem(message) !== null) continue;
    // Without an id, a notification: never run, so not counted.
    if (typeof message.id !== 'string' && typeof message.id !== 'number') continue;
    const name = message.params?.name;
    if (typeof name === 'string' && TOOL_BY_NAME.has(name)) return name;
  }
  return null;
}

const TOOL_BY_NAME = new Set(TOOLS.map((t) => t.name));

const TOOL_NAMES = TOOLS.map((t) => `\`${t.name}\``).join(', ');

// The body is validated by the app's Ajv, which coerces types: the id has no type here (the MCP
// transport checks it), so an id is echoed as it was sent, never turned from 1 into "1".
const JsonRpcId = Type.Unsafe<string | number>({
  description: 'The request id (a string or a number), echoed by its answer; absent on a notification.',
  examples: [1],
});

const JsonRpcMessage = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Optional(JsonRpcId),
    method: Type.Optional(
      Type.String({
        maxLength: 256,
        description:
          '`initialize`, `notifications/initialized`, `ping`, `tools/list` or `tools/call` (others: JSON-RPC error -32601).',
      }),
    ),
    params: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description: 'tools/call: `{ "name": <tool>, "arguments": { … } }`.',
        },
      ),
    ),
  },
  { additionalProperties: true, description: 'A JSON-RPC 2.0 message of the Model Context Protocol.' },
);

const JsonRpcAnswer = Type.Object(
  {
    jsonrpc: Type.Literal('2.0'),
    id: Type.Unsafe<string | number | null>({ type: ['string', 'number', 'null'] }),
    result: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'tools/call: `{ content: [{ type: "text", text }], structuredContent, isError? }`; the text is the JSON of ' +
            'structuredContent: `{ data, meta }` as the HTTP route answers, or the error body `{ error, message, … }` ' +
            'with `isError: true`.',
        },
      ),
    ),
    error: Type.Optional(
      Type.Object({
        code: Type.Integer({ description: 'JSON-RPC error code, e.g. -32602 for an unknown tool.' }),
        message: Type.String(),
        data: Type.Optional(Type.Unknown()),
      }),
    ),
  },
  { description: 'A JSON-RPC 2.0 answer: `result`, or `error`.' },
);

const MCP_HEADERS = {
  ...REQUEST_ID_HEADER,
  ...RATE_HEADERS,
  'Cache-Control': CACHE_HEADERS['Cache-Control'],
};

const DESCRIPTION =
  'The [Model Context Protocol](https://modelcontextprotocol.io) server of the agent API, over Streamable HTTP in ' +
  'stateless mode: connect an MCP client to this URL with your key in `Authorization: Bearer <API_KEY>`.\n\n' +
  'POST one JSON-RPC message (or a batch) with `Content-Type: application/json` and `Accept: application/json, ' +
  'text/event-stream`; the answer is JSON (no SSE stream, no session id): 200 with the JSON-RPC answer, 202 without ' +
  'a body for notifications. GET (a server-sent event stream) and DELETE (the end of a session) are not offered: ' +
  '405. Methods: `initialize`, `ping`, `tools/list`, `tools/call`. A batch holds at most 20 messages, and the ids of ' +
  'its requests must differ (400 `INVALID_PARAMETER` otherwise, nothing run or counted). A `tools/call` whose `name` ' +
  'is not a string or whose `arguments` is not an object is answered with the JSON-RPC error -32602 (Invalid params), ' +
  'not counted.\n\n' +
  `Tools: ${TOOL_NAMES}, each calling the query of its HTTP route (\`search_markets\`: \`GET /markets/search\`); ` +
  'a tool result carries `{ data, meta }` as the route answers it, as JSON text and as `structuredContent`.\n\n' +
  'Limits: each `tools/call` is one request: it takes one slot of the per-second window and counts against the ' +
  'daily and monthly quotas (an HTTP request carrying tool calls takes no slot of its own); an HTTP request ' +
  'without one (initialize, ping, tools/list) takes one slot and is not counted. A refused call is a tool result with `isError: true` and ' +
  'the error body of the HTTP API (`RATE_LIMIT_EXCEEDED`, `DAILY_QUOTA_EXCEEDED`, `MONTHLY_QUOTA_EXCEEDED` with `retryAfter` in seconds; ' +
  '`TIER_FORBIDDEN`, `CHAIN_FORBIDDEN`, `INVALID_PARAMETER`, `MARKET_NOT_FOUND`). Tier rules apply to the ' +
  "arguments as to query parameters: `limit` is lowered to min(the tool's maximum, the tier's result cap) and " +
  "`chainIds` filtered to the tier's chains (reported in `meta.clamped`).";

/** A market's cached JSON pieces, as an object. */
function parsed(pieces: Uint8Array | readonly Uint8Array[]): JsonObject {
  const bytes = pieces instanceof Uint8Array ? pieces : Buffer.concat(pieces);
  return JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'));
}

/** The HTTP API's rendering, for the tools of one request (meta.latencyMs is this request's). */
function rendering(request: FastifyRequest): Rendering {
  return {
    market: (model: ReadModel, ord: number, nowMs: number) =>
      parsed(marketJson(model, ord, Math.floor(nowMs / 1000))),
    positionAtRisk: (model: ReadModel, index: number) => parsed(model.risk.json(index, positionJson)),
    meta: (model, nowMs, found, clamped) => ({ ...dataMeta(request, model, nowMs, found, clamped) }),
  };
}

/** What the MCP transport refused (a malformed message, a missing Accept), in the API's error shape. */
function transportRefusal(status: number, body: string): Error {
  let message = body;
  try {
    message = String(JSON.parse(body)?.error?.message ?? body);
  } catch {
    // not JSON-RPC: the text as it is
  }
  if (status === 415)
    return new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.');
  if (status === 406) {
    return invalidParameter([
      {
        parameter: 'accept',
        problem: 'must list both application/json and text/event-stream (MCP Streamable HTTP)',
      },
    ]);
  }
  if (status === 400) {
    const parameter = /protocol version/i.test(message) ? 'mcp-protocol-version' : 'body';
    return invalidParameter([{ parameter, problem: message.slice(0, 300) }]);
  }
  return new Error(`the MCP transport answered ${status}: ${message.slice(0, 300)}`);
}

/** The headers the MCP transport reads, from the HTTP request. */
function transportHeaders(request: FastifyRequest): Headers {
  const headers = new Headers();
  for (const name of ['accept', 'content-type', 'mcp-protocol-version']) {
    const value = request.headers[name];
    if (typeof value === 'string') headers.set(name, value);
  }
  return headers;
}

/**
 * A body the route could not read (not JSON, malformed): kept as the error to answer, so that
 * the request is admitted and authorized first (docs/decisions.md "Order of checks and what counts"), as on every route, before it is refused.
 */
class UnreadBody {
  readonly error: Error;
  constructor(error: Error) {
    this.error = error;
  }
}

export function registerMcp(parent: Api, deps: RouteDeps): void {
  // A scope of its own: its body parsers hand parse failures to the route instead of answering them.
  parent.register(async (app: Api) => mcpRoute(app, deps));
}

function mcpRoute(app: Api, deps: RouteDeps): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) =>
    json(request, body as string, (err, parsed) => done(null, err ? new UnreadBody(err) : parsed)),
  );
  app.addContentTypeParser('*', (_request, _payload, done) =>
    done(
      null,
      new UnreadBody(new ApiError('UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json.')),
    ),
  );
  // The admission of a request's first tool call, made before validation, for the MCP server.
  /** The tools' output schemas, from the served document (built by the first tools/list). */
  let outputs: Map<string, Record<string, unknown>> | null = null;
  const preAdmitted = new WeakMap<FastifyRequest, Admitted & { tool: string }>();
  const mcp = mcpEndpoint({
    admission: deps.admission,
    data: deps.data,
    clock: deps.clock,
    pageSnapshots: deps.pageSnapshots,
    serverInfo: { name: 'lending-risk-data-service', version: API_VERSION },
    outputSchema: (operationId) => {
      outputs ??= outputSchemas(app);
      return outputs.get(operationId);
    },
  });
  app.post(
    '/agent/mcp',
    {
      config: { access: ACCESS },
      // "Order of checks and what counts" (docs/decisions.md) before validation, as every route: the admission the body asks for, then the category.
      preValidation: async (request, reply) => {
        const caller = callerOf(request);
        const tool = firstToolCall(request.body);
        const admitted = await admitRequest(deps, request, reply, {
          counted: tool !== null,
          endpoint: tool === null ? 'POST /agent/mcp' : `MCP ${tool}`,
        });
        // A refused tool call is the tool's error (a result with isError), unless the key may not
        // use the server at all: then, as for a request without tool calls, the HTTP refusal.
        if (!admitted.result.ok && (tool === null || !tierAllowsCategory(caller.tier, ACCESS.category)))
          throw refusedAdmission(caller.tier, admitted);
        authorize(request, ACCESS);
        if (request.body instanceof UnreadBody) throw request.body.error;
        // Each answer of a batch is matched to its request by id: two requests with one id could
        // not both be answered (the first answer would stand for both), so none is run.
        const twice = duplicateId(request.body);
        if (twice !== null)
          throw invalidParameter([
            {
              parameter: 'body',
              problem: `holds two requests with id ${JSON.stringify(twice)}: ids must be unique within a batch`,
            },
          ]);
        if (tool !== null) preAdmitted.set(request, { ...admitted, tool });
      },
      schema: {
        operationId: 'mcp',
        summary: 'MCP server (Streamable HTTP)',
        description: DESCRIPTION,
        querystring: Type.Object({}, { additionalProperties: false }),
        body: Type.Union([JsonRpcMessage, Type.Array(JsonRpcMessage, { minItems: 1, maxItems: 20 })], {
          examples: [
            {
              jsonrpc: '2.0',
              id: 1,
              method: 'tools/call',
              params: { name: 'search_markets', arguments: { query: 'wstETH/WETH', limit: 3 } },
            },
          ],
        }),
        response: {
          200: {
            ...Type.Union([JsonRpcAnswer, Type.Array(JsonRpcAnswer)]),
            description: 'The JSON-RPC answer (an array of them for a batch).',
            headers: MCP_HEADERS,
          },
          202: {
            ...Type.Null({ description: 'Accepted: the message held only notifications; no body.' }),
            headers: MCP_HEADERS,
          },
        },
      },
    },
    async (request, reply) => {
      const caller = callerOf(request);
      const admitted = preAdmitted.get(request);
      const url = new URL(request.url, 'http://localhost');
      const answer = await mcp(
        new Request(url, { method: 'POST', headers: transportHeaders(request) }),
        request.body,
        {
          keyId: caller.key.id,
          accountId: caller.key.accountId,
          mode: caller.key.mode,
          tier: caller.tier,
          render: rendering(request),
          ...(admitted ? { admitted } : {}),
          onAdmission: (result, nowMs) => setRateHeaders(reply, result, caller.tier, true, nowMs),
          onError: (err) => {
            request.log.error({ err }, 'MCP tool failed');
            return `An unexpected error occurred. Request id: ${request.id}`;
          },
        },
      );
      const text = await answer.text();
      if (answer.status !== 200 && answer.status !== 202) throw transportRefusal(answer.status, text);
      // The JSON-RPC answer as the transport wrote it (no serialization again).
      const out: FastifyReply = reply.code(answer.status).header('cache-control', 'no-store');
      if (answer.status === 202) return out.send();
      return out.type(JSON_TYPE).send(text);
    },
  );
}

/**
 * Each operation's success schema in the served document, self-contained for an MCP tool's
 * outputSchema: `{ type: 'object', anyOf: [the success, the API's error body], $defs }`, the named
 * schemas it uses in `$defs` (a refused call's structured content is the error body).
 */
function outputSchemas(app: Api): Map<string, Record<string, unknown>> {
  const doc = app.swagger() as unknown as {
    paths: Record<
      string,
      Record<
        string,
        {
          operationId?: string;
          responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>;
        }
      >
    >;
    components: { schemas: Record<string, unknown> };
  };
  const PREFIX = '#/components/schemas/';
  const local = (value: unknown, used: Set<string>): unknown => {
    if (Array.isArray(value)) return value.map((v) => local(v, used));
    if (value === null || typeof value !== 'object') return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(PREFIX)) {
        used.add(v.slice(PREFIX.length));
        out[k] = `#/$defs/${v.slice(PREFIX.length)}`;
      } else out[k] = local(v, used);
    }
    return out;
  };
  const outputs = new Map<string, Record<string, unknown>>();
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      const success = op.responses?.['200']?.content?.['application/json']?.schema;
      if (!op.operationId || !success) continue;
      const used = new Set<string>(['Error']);
      const schema = local(success, used);
      const defs: Record<string, unknown> = {};
      const pending = [...used];
      for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
        if (name in defs) continue;
        const more = new Set<string>();
        defs[name] = local(doc.components.schemas[name], more);
        for (const n of more) if (!(n in defs)) pending.push(n);
      }
      outputs.set(op.operationId, {
        type: 'object',
        anyOf: [schema, { $ref: '#/$defs/Error' }],
        $defs: defs,
      });
    }
  }
  return outputs;
}
