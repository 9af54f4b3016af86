import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import { z } from 'zod';
import { type Admission, type AdmissionResult, BackendUnavailableError } from '../access/admission.ts';
import { clampScope, DEFAULT_LIMIT } from '../access/clamp.ts';
import { admissionRefusal, chainForbidden, tierForbidden } from '../access/refusals.ts';
import { type Tier, tierAllowsCategory, tierAllowsChain } from '../access/tiers.ts';
import type { PageSnapshots } from '../data/page-snapshots.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { Clock } from '../domain/clock.ts';
import type { KeyMode } from '../domain/records/keys.ts';
import { processMetrics } from '../metrics.ts';
import { QueryError } from '../queries/errors.ts';
import {
  type JsonObject,
  type McpTool,
  type Rendering,
  refusalBody,
  type ToolContext,
  type ToolErrorBody,
  ToolRefusal,
} from './tool.ts';
import { TOOLS } from './tools/index.ts';

/**
 * The MCP server of the agent API (Streamable HTTP, stateless): every HTTP request gets a fresh
 * SDK `Server` and transport, answers in JSON (no SSE stream), and is gone. It serves
 * `initialize`, `ping`, `tools/list` and `tools/call`.
 *
 * The HTTP request itself went through the access pipeline (authenticated, the `agent`
 * category). Each `tools/call` is one request of the API: admitted by the rate limiter and
 * counted against the daily and monthly quotas (docs/decisions.md "Order of checks and what counts"; the first call of a request was
 * admitted by the HTTP layer, `McpCall.admitted`), in the HTTP order, before its arguments are looked at: admission, the category of the data the
 * tool serves, argument validation and clamps (docs/decisions.md "Clamping"), the query. A refusal is a tool result with
 * `isError: true` carrying the API's error body (docs/decisions.md "Errors"); a success carries `{ data, meta }`, the
 * HTTP answer's body for the same request, as text and as structured content.
 */

/** What the server needs of the service, wired by the HTTP route that mounts it. */
export interface McpDeps {
  admission: Admission;
  /** Read models by key mode: test keys get the sandbox (docs/decisions.md "Keys and accounts"). */
  data: { get(mode: KeyMode): ReadModel };
  clock: Clock;
  /** Where paged lists keep the set their first page fixed (as the HTTP routes do). */
  pageSnapshots: PageSnapshots;
  /** Name and version the server gives in `initialize`. */
  serverInfo: { name: string; version: string };
  /**
   * The JSON Schema of the success of an HTTP operation (by its operationId), self-contained:
   * a tool's `outputSchema` is its operation's, or the API's error body (a refused call).
   */
  outputSchema?: (operationId: string) => Record<string, unknown> | undefined;
}

/** One HTTP request's caller and the HTTP layer's part in it. */
export interface McpCall {
  /** The authenticated key: its id (for counting), mode and tier. */
  keyId: string;
  /** The key's account: its counted calls are held to the account's quota bound too. */
  accountId?: string;
  mode: KeyMode;
  tier: Tier;
  render: Rendering;
  /**
   * The admission of the request's first call of `tool`, made by the HTTP layer before the body
   * was validated (one slot for the call, not two): that call uses it rather than being admitted again.
   */
  admitted?: { result: AdmissionResult; nowMs: number; tool: string };
  /** Each tool call's admission, as it happens (the HTTP answer's rate headers follow the last). */
  onAdmission?(result: AdmissionResult, nowMs: number): void;
  /** A tool failed unexpectedly (a bug): logs it and gives the message of the INTERNAL_ERROR answered. */
  onError(err: unknown): string;
}

/** What the server tells a client it connects to (`initialize`): how to use it, in a few lines. */
const INSTRUCTIONS =
  'Risk data of decentralized lending markets (Morpho, Aave, Spark, Compound, Euler, Fluid): market search and ' +
  'detail, positions close to liquidation. Each tool answers what the HTTP API answers for the same request, ' +
  "{ data, meta }. Every tool call counts as one request against your API key's daily and monthly quotas and " +
  "takes a slot of its rate limit; a refused call is a tool error naming the API's error code (RATE_LIMIT_EXCEEDED, DAILY_QUOTA_EXCEEDED, " +
  "…) with retryAfter in seconds. `limit` is capped by your tier and `chainIds` filtered to your tier's chains " +
  '(reported in meta.clamped).';

/** The SDK's validator of elicitation answers (unused here), made once rather than per request. */
const VALIDATOR = new AjvJsonSchemaValidator();

/** A tool as tools/list describes it: its JSON Schema from its zod arguments (as the SDK's McpServer makes it). */
function listing(tool: McpTool, outputSchema: McpDeps['outputSchema']): Tool {
  const output = outputSchema?.(tool.operationId);
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: z.toJSONSchema(tool.input, { io: 'input', target: 'draft-7' }) as Tool['inputSchema'],
    ...(output ? { outputSchema: output as Tool['outputSchema'] } : {}),
    annotations: { title: tool.title, readOnlyHint: true, openWorldHint: false },
  };
}

function success(body: JsonObject): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body };
}

function failure(body: ToolErrorBody): CallToolResult {
  return { content: [{ type: 'text', text: JSON.stringify(body) }], structuredContent: body, isError: true };
}

/** What a query refuses, as the HTTP API answers it (400 INVALID_PARAMETER, 404 …_NOT_FOUND). */
function queryErrorBody(err: QueryError): ToolErrorBody {
  if (err.code === 'INVALID_PARAMETER' && err.detail) return ToolRefusal.invalid([err.detail]).body;
  return { error: err.code, message: err.message };
}

/** A JSON-RPC message's id, when it has one a request may have (a string or a number). */
function idOf(message: unknown): string | number | null {
  const id = (message as { id?: unknown } | null)?.id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/**
 * What makes a `tools/call` message no tool call at all (its params of the wrong shape), in a
 * few words for the JSON-RPC error -32602 Invalid params; null for any other message, or one
 * whose params are well formed. Such a message is answered without being admitted or counted,
 * as a call of an unknown tool.
 */
export function toolCallProblem(message: unknown): string | null {
  if (typeof message !== 'object' || message === null) return null;
  const m = message as { method?: unknown; params?: unknown };
  if (m.method !== 'tools/call') return null;
  const params = m.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return "Invalid params: 'params' must be an object with the tool's 'name' and 'arguments'.";
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string')
    return "Invalid params: 'name' must be a string (tools/list gives the tools).";
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
    return "Invalid params: 'arguments' must be an object of the tool's arguments by name.";
  return null;
}

/** The id a batch holds twice among its requests (messages with an id), if any. */
export function duplicateId(body: unknown): string | number | null {
  if (!Array.isArray(body)) return null;
  const seen = new Set<string>();
  for (const message of body) {
    const id = idOf(message);
    if (id === null || typeof (message as { method?: unknown }).method !== 'string') continue;
    const key = `${typeof id}:${id}`;
    if (seen.has(key)) return id;
    seen.add(key);
  }
  return null;
}

/**
 * The MCP endpoint over `tools`: a function from one HTTP request (as a web Request, its body
 * already parsed) to its answer (a web Response: 200 with the JSON-RPC answer, 202 for
 * notifications, 4xx from the transport for what the protocol refuses).
 */
export function mcpEndpoint(deps: McpDeps, tools: readonly McpTool[] = TOOLS) {
  const byName = new Map(tools.map((t) => [t.name, t]));
  if (byName.size !== tools.length) throw new Error('two MCP tools have the same name');
  // Listed at the first tools/list (the HTTP layer's document is built by then).
  let listed: Tool[] | null = null;
  const listing_ = () => {
    listed ??= tools.map((t) => listing(t, deps.outputSchema));
    return listed;
  };

  async function callTool(call: McpCall, name: string, args: unknown): Promise<CallToolResult> {
    const tool = byName.get(name);
    // Not a tool call of the API (nothing is counted): a JSON-RPC error, as the protocol says.
    if (!tool)
      throw new McpError(ErrorCode.InvalidParams, `Unknown tool '${name}'; tools/list gives the tools.`);
    const { tier } = call;
    const pre = call.admitted?.tool === name ? call.admitted : undefined;
    if (pre) call.admitted = undefined;
    const nowMs = pre?.nowMs ?? deps.clock.now();
    let admitted: AdmissionResult;
    try {
      admitted =
        pre?.result ??
        (await deps.admission.admit({
          keyId: call.keyId,
          ...(call.accountId === undefined ? {} : { accountId: call.accountId }),
          tier,
          endpoint: `MCP ${tool.name}`,
          counted: true,
          nowMs,
        }));
    } catch (err) {
      if (!(err instanceof BackendUnavailableError))
        return failure({ error: 'INTERNAL_ERROR', message: call.onError(err) });
      // As the HTTP API answers it (503 with Retry-After: 1).
      return failure({
        error: 'SERVICE_UNAVAILABLE',
        message: 'A backend is briefly unavailable; retry shortly.',
        retryAfter: 1,
      });
    }
    call.onAdmission?.(admitted, nowMs);
    if (!admitted.ok) {
      processMetrics().refusals.inc({ reason: admitted.reason, tier: tier.id });
      return failure(refusalBody(admissionRefusal(admitted, tier, nowMs)));
    }
    if (!tierAllowsCategory(tier, tool.category))
      return failure(refusalBody(tierForbidden(tier, tool.category)));

    const model = deps.data.get(call.mode);
    // The chains the tool's query was scoped to: its answer is as fresh as their sources (docs/decisions.md "Freshness per source").
    let scoped: readonly number[] | undefined;
    const ctx: ToolContext = {
      model,
      tier,
      nowMs,
      mode: call.mode,
      pageSnapshots: deps.pageSnapshots,
      clamp: (q) => {
        const clamped = clampScope(q, tool.limitMax ?? DEFAULT_LIMIT, tier, nowMs);
        scoped = clamped.chainIds;
        return clamped;
      },
      requireChain(chainId) {
        if (!tierAllowsChain(tier, chainId)) throw ToolRefusal.of(chainForbidden(tier, chainId));
      },
      market: (ord) => call.render.market(model, ord, nowMs),
      positionAtRisk: (index) => call.render.positionAtRisk(model, index),
    };
    try {
      const answer = await tool.run(ctx, args);
      return success({
        data: answer.data,
        meta: call.render.meta(
          model,
          nowMs,
          answer.found.chains || !scoped ? answer.found : { ...answer.found, chains: scoped },
          answer.clamped,
        ),
      });
    } catch (err) {
      if (err instanceof ToolRefusal) return failure(err.body);
      if (err instanceof QueryError) return failure(queryErrorBody(err));
      return failure({ error: 'INTERNAL_ERROR', message: call.onError(err) });
    }
  }

  /**
   * One HTTP request's messages: those that are no tool call at all (toolCallProblem) answered
   * -32602 here, the others by the SDK's server. Every tool call started has finished before the
   * answer is returned (nothing of the request runs once it is answered).
   */
  return async function handle(request: Request, parsedBody: unknown, call: McpCall): Promise<Response> {
    const batch = Array.isArray(parsedBody);
    const messages: unknown[] = batch ? parsedBody : [parsedBody];
    const refused: object[] = [];
    const kept: unknown[] = [];
    for (const message of messages) {
      const problem = toolCallProblem(message);
      const id = idOf(message);
      // A notification is never answered, a malformed one included.
      if (problem === null) kept.push(message);
      else if (id !== null)
        refused.push({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: problem } });
    }
    if (refused.length === 0) return serve(request, parsedBody, call);
    const json = (answers: object[]) =>
      new Response(JSON.stringify(batch ? answers : answers[0]), {
        status: 200,
        headers: { 'content-type': 'application/json' },
      });
    if (!kept.some((m) => idOf(m) !== null)) return json(refused);
    const rest = await serve(request, kept, call);
    if (rest.status !== 200) return rest;
    const answered = (await rest.json()) as object | object[];
    return json([...(Array.isArray(answered) ? answered : [answered]), ...refused]);
  };

  async function serve(request: Request, parsedBody: unknown, call: McpCall): Promise<Response> {
    const running = new Set<Promise<unknown>>();
    const server = new Server(deps.serverInfo, {
      capabilities: { tools: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing_() }));
    server.setRequestHandler(CallToolRequestSchema, (req) => {
      const run = callTool(call, req.params.name, req.params.arguments);
      running.add(run);
      return run.finally(() => running.delete(run));
    });
    // Stateless: no session id; one JSON answer per request rather than an SSE stream.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      // The answer is complete only once every call it started has finished.
      await Promise.allSettled(running);
      await server.close();
    }
  }
}
