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
import type { ReadModel } from '../data/read-model.ts';
import type { Clock } from '../domain/clock.ts';
import { processMetrics } from '../metrics.ts';
import { QueryError } from '../queries/errors.ts';
import type { KeyMode } from '../store/types.ts';
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
 * counted against the daily and monthly quotas (DECISIONS D7; the first call of a request was
 * admitted by the HTTP layer, `McpCall.admitted`), in the HTTP order, before its arguments are looked at: admission, the category of the data the
 * tool serves, argument validation and clamps (D9), the query. A refusal is a tool result with
 * `isError: true` carrying the API's error body (D6); a success carries `{ data, meta }`, the
 * HTTP answer's body for the same request, as text and as structured content.
 */

/** What the server needs of the service, wired by the HTTP route that mounts it. */
export interface McpDeps {
  admission: Admission;
  /** Read models by key mode: test keys get the sandbox (D10). */
  data: { get(mode: KeyMode): ReadModel };
  clock: Clock;
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
  if (err.code === 'INVALID_PARAMETER')
    return ToolRefusal.invalid([{ parameter: err.parameter!, problem: err.problem! }]).body;
  return { error: err.code, message: err.message };
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
    // The chains the tool's query was scoped to: its answer is as fresh as their sources (D16).
    let scoped: readonly number[] | undefined;
    const ctx: ToolContext = {
      model,
      tier,
      nowMs,
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

  return async function handle(request: Request, parsedBody: unknown, call: McpCall): Promise<Response> {
    const server = new Server(deps.serverInfo, {
      capabilities: { tools: {} },
      instructions: INSTRUCTIONS,
      jsonSchemaValidator: VALIDATOR,
    });
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listing_() }));
    server.setRequestHandler(CallToolRequestSchema, (req) =>
      callTool(call, req.params.name, req.params.arguments),
    );
    // Stateless: no session id; one JSON answer per request rather than an SSE stream.
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { parsedBody });
    } finally {
      await server.close();
    }
  };
}
