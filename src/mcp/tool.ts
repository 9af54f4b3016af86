import { z } from 'zod';
import type { Clamped, ClampedScope, ScopeRequest } from '../access/clamp.ts';
import type { Refusal } from '../access/refusals.ts';
import type { Category, Tier } from '../access/tiers.ts';
import type { PageSnapshots } from '../data/page-snapshots.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { KeyMode } from '../domain/records/keys.ts';
import type { Found } from '../queries/types.ts';

/**
 * An MCP tool: a thin adapter around a query function, as an HTTP route is. It declares what a
 * route declares (its category, its `limit` maximum, its arguments) and maps its arguments to
 * the query's parameters; the server (server.ts) does the rest, the same way for every tool:
 * admission and counting, the category check, argument validation, errors, the answer.
 *
 * Adding a tool: a file in tools/ with `defineTool({...})`, and its name in tools/index.ts.
 */

/** A JSON object, as the HTTP API serves it. */
export type JsonObject = Record<string, unknown>;

/** The facts of a query's result the answer's meta is made of (docs/decisions.md "Meta"). */
export type MetaFacts = Pick<
  Found<unknown>,
  'itemProtocols' | 'scopeProtocols' | 'chains' | 'total' | 'nextCursor' | 'asOfMs'
>;

/**
 * How the HTTP API renders what the queries find (its cached JSON of markets and positions, its
 * meta), handed in by the HTTP layer that mounts the MCP server: a tool answers exactly what
 * the matching route answers, and this package imports nothing of HTTP.
 */
export interface Rendering {
  /** A market (catalog ordinal) as `GET /markets/{marketId}` serves it, its oracle health at `nowMs`. */
  market(model: ReadModel, ord: number, nowMs: number): JsonObject;
  /** A position (risk index position) as `GET /risk/positions-at-risk` serves it. */
  positionAtRisk(model: ReadModel, index: number): JsonObject;
  /** The meta of the answer (freshness, source, asOf, clamped, total, …). */
  meta(model: ReadModel, nowMs: number, found: MetaFacts, clamped: Clamped | undefined): JsonObject;
}

/** What a tool's `run` is given: the caller's data and tier, the instant, the clamps, the rendering. */
export interface ToolContext {
  /** The caller's read model: the sandbox for test keys (docs/decisions.md "Keys and accounts"). */
  readonly model: ReadModel;
  readonly tier: Tier;
  /** The instant the answer reflects, epoch ms (the one the call was admitted at). */
  readonly nowMs: number;
  /** The caller's key mode (whose data `model` is). */
  readonly mode: KeyMode;
  /** Where paged lists keep the set their first page fixed, shared with the HTTP routes. */
  readonly pageSnapshots: PageSnapshots;
  /**
   * The clamps of "Clamping" (docs/decisions.md) on the arguments, as an HTTP route's: `limit` lowered to min(the tool's
   * `limitMax`, the tier's result cap), `chainIds` filtered to the tier's chains, `startDate`
   * raised to the tier's history window. `clamped` goes into the answer's meta.
   */
  clamp(args: ScopeRequest): ClampedScope;
  /** Refuses with CHAIN_FORBIDDEN a chain outside the tier (a tool about one chain's item, as the HTTP routes of one chain). */
  requireChain(chainId: number): void;
  /** The HTTP API's rendering, bound to this model and instant. */
  market(ord: number): JsonObject;
  positionAtRisk(index: number): JsonObject;
}

/** A tool's answer: its `data` (the HTTP route's `data`), the facts of its meta, and what was clamped. */
export interface ToolAnswer {
  data: unknown;
  found: MetaFacts;
  clamped?: Clamped | undefined;
}

/** The body of a refused tool call: the API's error body, `{ error, message, ...extra }` (docs/decisions.md "Errors"). */
export interface ToolErrorBody {
  error: string;
  message: string;
  [extra: string]: unknown;
}

/** An expected refusal inside a tool (an argument, a chain): answered as a tool error. */
export class ToolRefusal extends Error {
  readonly body: ToolErrorBody;

  constructor(body: ToolErrorBody) {
    super(body.message);
    this.name = 'ToolRefusal';
    this.body = body;
  }

  /** An access refusal (src/access/refusals.ts): its body, with `retryAfter` in seconds when there is a wait. */
  static of(r: Refusal): ToolRefusal {
    return new ToolRefusal(refusalBody(r));
  }

  static invalid(details: { parameter: string; problem: string }[]): ToolRefusal {
    const first = details[0];
    const message =
      details.length === 1 && first
        ? `Invalid parameter '${first.parameter}': ${first.problem}`
        : `Invalid parameters: ${details.map((d) => `'${d.parameter}' ${d.problem}`).join('; ')}`;
    return new ToolRefusal({ error: 'INVALID_PARAMETER', message, details });
  }
}

/** The error body of an access refusal. A quota refusal's wait (HTTP's Retry-After) becomes `retryAfter`, in seconds. */
export function refusalBody(r: Refusal): ToolErrorBody {
  const body: ToolErrorBody = { error: r.code, message: r.message, ...r.extra };
  if (r.retryAfterSeconds !== undefined && body.retryAfter === undefined)
    body.retryAfter = r.retryAfterSeconds;
  return body;
}

/** A tool as the server runs it. */
export interface McpTool {
  /** snake_case, unique. */
  readonly name: string;
  /** The HTTP operation it answers as (its data and meta): its outputSchema is that operation's. */
  readonly operationId: string;
  readonly title: string;
  /** What it does, for the model choosing it: the route's description, in a tool's words. */
  readonly description: string;
  /** The category of the data it serves (docs/decisions.md "Tiers and categories"): a tier without it is refused TIER_FORBIDDEN. */
  readonly category: Category;
  /** Its own maximum of `limit`, when it takes one (the tier's result cap may lower it). */
  readonly limitMax?: number;
  /** Its arguments (unknown ones are refused, as HTTP refuses unknown query parameters). */
  readonly input: z.ZodObject;
  /** Runs the tool on raw arguments: INVALID_PARAMETER (a ToolRefusal) when they do not fit `input`. */
  run(ctx: ToolContext, args: unknown): ToolAnswer | Promise<ToolAnswer>;
}

export interface ToolDefinition<Shape extends z.ZodRawShape> {
  name: string;
  /** The HTTP operation it answers as. */
  operationId: string;
  title: string;
  description: string;
  category: Category;
  limitMax?: number;
  /** The arguments, each with a `.describe()` as the HTTP route's querystring describes it. */
  input: Shape;
  run(ctx: ToolContext, args: z.output<z.ZodObject<Shape>>): ToolAnswer | Promise<ToolAnswer>;
}

/** A tool from its definition: its arguments are validated (strictly) before its `run` sees them. */
export function defineTool<Shape extends z.ZodRawShape>(def: ToolDefinition<Shape>): McpTool {
  const input = z.strictObject(def.input);
  return {
    name: def.name,
    operationId: def.operationId,
    title: def.title,
    description: def.description,
    category: def.category,
    ...(def.limitMax === undefined ? {} : { limitMax: def.limitMax }),
    input,
    run(ctx, args) {
      const given = args ?? {};
      const parsed = input.safeParse(given);
      if (!parsed.success) throw ToolRefusal.invalid(problemsOf(parsed.error.issues, given));
      return def.run(ctx, parsed.data);
    },
  };
}

/** Zod's issues as "Errors" (docs/decisions.md) details: one per argument, in the words the HTTP API uses where it has them. */
function problemsOf(
  issues: readonly z.core.$ZodIssue[],
  given: unknown,
): { parameter: string; problem: string }[] {
  const out = new Map<string, string>();
  const args = given !== null && typeof given === 'object' ? (given as Record<string, unknown>) : {};
  for (const issue of issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) if (!out.has(key)) out.set(key, 'is not a known parameter');
      continue;
    }
    const parameter = issue.path.map(String).join('.') || 'arguments';
    const missing = issue.path.length === 1 && args[String(issue.path[0])] === undefined;
    if (!out.has(parameter)) out.set(parameter, missing ? 'is required' : issue.message);
  }
  return [...out].map(([parameter, problem]) => ({ parameter, problem }));
}
