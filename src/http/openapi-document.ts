/**
 * The served OpenAPI document's final shape, made from what @fastify/swagger builds out of the
 * routes' schemas: what many operations share is stated once in `components` and referenced —
 * error responses (`components.responses`), response headers (`components.headers`) and
 * parameters used by more than one operation (`components.parameters`) — and every object's
 * keys are sorted (but the fields of a schema's `properties`, kept in the order they are
 * declared), so that the same routes always give the same bytes and a change shows as a small
 * diff. Paths, operation ids and schema names are untouched.
 */

import { readFileSync } from 'node:fs';
import { ERROR_STATUS } from './errors.ts';

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The keys of every object sorted, recursively; a `properties` map keeps its order (the order
 * of the fields), and so do examples (the answers they show, as the API writes them).
 */
export function sortKeys(value: Json, mode: 'sort' | 'properties' | 'keep' = 'sort'): Json {
  if (Array.isArray(value)) return value.map((v) => sortKeys(v, mode === 'keep' ? 'keep' : 'sort'));
  if (!isObj(value)) return value;
  const entries = Object.entries(value);
  if (mode === 'sort') entries.sort(([a], [b]) => (a < b ? -1 : 1));
  const out: Obj = {};
  for (const [k, v] of entries) {
    const child =
      mode === 'keep' || (mode === 'sort' && (k === 'example' || k === 'examples'))
        ? 'keep'
        : mode === 'sort' && k === 'properties'
          ? 'properties'
          : 'sort';
    out[k] = sortKeys(v, child);
  }
  return out;
}

/** A stable text of a value, whatever the order of its keys. */
const canonical = (v: Json) => JSON.stringify(sortKeys(v));

/** `MARKET_NOT_FOUND or NOT_FOUND` → `MarketNotFoundOrNotFound`. */
function pascal(text: string): string {
  return text
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1).toLowerCase())
    .join('');
}

/** Names values by a preferred name, another (`name-2`, …) for each different value of the same name. */
class Registry {
  readonly entries: Obj = {};
  readonly #byText = new Map<string, string>();

  name(preferred: string, value: Json): string {
    const text = canonical(value);
    const known = this.#byText.get(text);
    if (known) return known;
    let name = preferred;
    for (let i = 2; name in this.entries; i++) name = `${preferred}-${i}`;
    this.entries[name] = value;
    this.#byText.set(text, name);
    return name;
  }
}

const OPERATION_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

function operationsOf(doc: Obj): Obj[] {
  const out: Obj[] = [];
  for (const item of Object.values(isObj(doc.paths) ? doc.paths : {}))
    if (isObj(item)) for (const m of OPERATION_METHODS) if (isObj(item[m])) out.push(item[m]);
  return out;
}

/** Response headers by reference: `{ "X-Request-Id": { "$ref": "#/components/headers/X-Request-Id" } }`. */
function refHeaders(response: Obj, headers: Registry): void {
  if (!isObj(response.headers)) return;
  const out: Obj = {};
  for (const [name, header] of Object.entries(response.headers))
    out[name] =
      isObj(header) && '$ref' in header
        ? header
        : { $ref: `#/components/headers/${headers.name(name, header)}` };
  response.headers = out;
}

/** The document with its shared parts in `components`, keys sorted. */
export function finishDocument<T extends object>(input: T): T {
  const doc = structuredClone(input) as unknown as Obj;
  const components: Obj = isObj(doc.components) ? doc.components : {};
  const headers = new Registry();
  const responses = new Registry();
  const parameters = new Registry();
  const operations = operationsOf(doc);

  // Parameters: those two operations or more declare alike.
  const uses = new Map<string, number>();
  for (const op of operations)
    for (const p of Array.isArray(op.parameters) ? op.parameters : [])
      uses.set(canonical(p), (uses.get(canonical(p)) ?? 0) + 1);
  for (const op of operations) {
    if (!Array.isArray(op.parameters)) continue;
    op.parameters = op.parameters.map((p) =>
      isObj(p) && (uses.get(canonical(p)) ?? 0) > 1
        ? { $ref: `#/components/parameters/${parameters.name(String(p.name), p)}` }
        : p,
    );
  }

  for (const op of operations) {
    if (!isObj(op.responses)) continue;
    for (const [status, response] of Object.entries(op.responses)) {
      if (!isObj(response) || '$ref' in response) continue;
      refHeaders(response, headers);
      // Errors (4xx, 5xx) are the same on many operations: stated once.
      if (/^[45]/.test(status)) {
        // Named by the error codes it shows (its examples).
        const media = isObj(response.content) ? response.content['application/json'] : undefined;
        const codes =
          isObj(media) && isObj(media.examples)
            ? Object.keys(media.examples).filter((c) => c in ERROR_STATUS)
            : [];
        const preferred = pascal(codes.length > 0 ? codes.join(' or ') : `Error ${status}`);
        op.responses[status] = { $ref: `#/components/responses/${responses.name(preferred, response)}` };
      }
    }
  }
  if (Object.keys(parameters.entries).length > 0)
    components.parameters = {
      ...(isObj(components.parameters) ? components.parameters : {}),
      ...parameters.entries,
    };
  if (Object.keys(responses.entries).length > 0)
    components.responses = {
      ...(isObj(components.responses) ? components.responses : {}),
      ...responses.entries,
    };
  if (Object.keys(headers.entries).length > 0)
    components.headers = { ...(isObj(components.headers) ? components.headers : {}), ...headers.entries };
  doc.components = components;
  return sortKeys(doc) as unknown as T;
}

/**
 * Each operation's success shown with a real answer, taken from the deterministic sandbox (the
 * default profile and seed, at its own date; lists cut to two items): written by
 * `node test/openapi-examples.ts --write`, kept true by test/openapi-examples.test.ts.
 */
const EXAMPLES = JSON.parse(readFileSync(new URL('./openapi-examples.json', import.meta.url), 'utf8')) as Obj;

export function withExamples<T extends object>(doc: T): T {
  for (const op of operationsOf(doc as unknown as Obj)) {
    const example = EXAMPLES[String(op.operationId)];
    if (example === undefined || !isObj(op.responses)) continue;
    for (const [status, response] of Object.entries(op.responses)) {
      if (!/^20[012]$/.test(status) || !isObj(response) || !isObj(response.content)) continue;
      const media = response.content['application/json'];
      if (!isObj(media)) continue;
      media.examples = {
        sandbox: { summary: 'An answer of the sandbox (lists cut to two items)', value: example },
      };
    }
  }
  return doc;
}

/**
 * A stream of JSON lines (application/x-ndjson) is not one JSON document: its `schema` says it
 * is text, so that a validating proxy accepts the body, and `x-itemSchema` (the field OpenAPI
 * 3.2 names `itemSchema`) is the schema of each line.
 */
export function withNdjsonLines<T extends object>(doc: T): T {
  for (const op of operationsOf(doc as unknown as Obj)) {
    if (!isObj(op.responses)) continue;
    for (const response of Object.values(op.responses)) {
      if (!isObj(response) || !isObj(response.content)) continue;
      const media = response.content['application/x-ndjson'];
      if (!isObj(media) || !isObj(media.schema) || 'x-itemSchema' in media) continue;
      const line = media.schema;
      media['x-itemSchema'] = line;
      media.schema = {
        type: 'string',
        description:
          `Newline-delimited JSON: one JSON value per line, each as \`x-itemSchema\` says. ${String(line.description ?? '')}`.trim(),
      };
    }
  }
  return doc;
}
