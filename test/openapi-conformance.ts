import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';

/**
 * Checks answers against the served OpenAPI document, so that a route answering anything
 * undocumented fails the test that received it: the status must be documented for the
 * operation, every header of the API's own vocabulary it sends must be documented on that
 * response, and a JSON body must validate (Ajv, JSON Schema 2020-12) against the response's
 * schema; a response documented without content must have no body. Paths the document does not
 * describe (unknown paths, the document itself, the docs page) are not checked.
 */

/** Headers of the API's own vocabulary (standard HTTP, CORS and security headers are not listed in the document). */
const OWN_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'etag',
  'cache-control',
  'www-authenticate',
  'idempotent-replayed',
];

interface Response {
  $ref?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

interface Operation {
  responses: Record<string, Response>;
}

export interface Answer {
  method: string;
  url: string;
  statusCode: number;
  headers: Record<string, string | string[] | number | undefined>;
  rawPayload: Buffer;
}

export function conformanceChecker(doc: {
  servers?: { url: string }[];
  paths: Record<string, Record<string, Operation>>;
}) {
  // Paths are relative to the server URL (a path like /api/v1).
  const base = doc.servers?.[0]?.url.startsWith('/') ? doc.servers[0].url.replace(/\/$/, '') : '';
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  ajv.addSchema({ ...doc, $id: 'openapi' });
  const validators = new Map<string, ValidateFunction>();
  const templates = Object.keys(doc.paths).map((path) => ({
    path,
    re: new RegExp(`^${path.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const pointer = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');
  /** A local reference (`#/components/responses/…`) of the document. */
  const resolve = (ref: string): Response | undefined => {
    let node: unknown = doc;
    for (const raw of ref.replace(/^#\//, '').split('/')) {
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      node = node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    }
    return node as Response | undefined;
  };

  return function check(a: Answer): string[] {
    const full = a.url.split('?')[0]!;
    if (base && !full.startsWith(`${base}/`)) return [];
    const path = full.slice(base.length);
    const tpl = templates.find((t) => t.re.test(path));
    const method = a.method.toLowerCase();
    const op = tpl && doc.paths[tpl.path]![method];
    if (!tpl || !op) return [];
    const where = `${a.method} ${path} ${a.statusCode}`;
    const code = String(a.statusCode) in op.responses ? String(a.statusCode) : 'default';
    const listed = op.responses[code];
    if (!listed) return [`${where}: status not documented`];
    // A response stated once in components.responses and referenced.
    const responsePointer =
      typeof listed.$ref === 'string'
        ? listed.$ref.slice(1)
        : `/paths/${pointer(tpl.path)}/${method}/responses/${code}`;
    const response = typeof listed.$ref === 'string' ? resolve(listed.$ref) : listed;
    if (!response) return [`${where}: ${listed.$ref} not found`];
    const problems: string[] = [];
    const documented = new Set(Object.keys(response.headers ?? {}).map((h) => h.toLowerCase()));
    for (const h of OWN_HEADERS) {
      if (a.headers[h] !== undefined && !documented.has(h))
        problems.push(`${where}: header ${h} not documented`);
    }
    let body = a.rawPayload;
    const encoding = a.headers['content-encoding'];
    if (encoding === 'gzip') body = gunzipSync(body);
    else if (encoding === 'br') body = brotliDecompressSync(body);
    const type = String(a.headers['content-type'] ?? '')
      .split(';')[0]!
      .trim();
    const media = type === 'application/x-ndjson' ? type : 'application/json';
    if (media !== 'application/json' && !response.content?.[media])
      return [...problems, `${where}: content type ${type} not documented`];
    const schema = response.content?.[media]?.schema;
    if (!schema) {
      if (body.length > 0 && a.method !== 'HEAD') problems.push(`${where}: a body where none is documented`);
      return problems;
    }
    if (a.method === 'HEAD') return problems;
    // A stream of JSON lines states the schema of a line apart (x-itemSchema).
    const part =
      response.content?.[media] && 'x-itemSchema' in response.content[media] ? 'x-itemSchema' : 'schema';
    const key = `${responsePointer} ${media}`;
    let found = validators.get(key);
    if (!found) {
      found = ajv.compile({ $ref: `openapi#${responsePointer}/content/${pointer(media)}/${part}` });
      validators.set(key, found);
    }
    const validate = found;
    if (media === 'application/x-ndjson') {
      // One JSON value per line, each valid against the documented line schema.
      const lines = body.toString('utf8').split('\n');
      if (lines.at(-1) !== '') problems.push(`${where}: NDJSON body does not end with a newline`);
      for (const [i, line] of lines.slice(0, -1).entries()) {
        let value: unknown;
        try {
          value = JSON.parse(line);
        } catch {
          problems.push(`${where}: NDJSON line ${i + 1} is not JSON`);
          continue;
        }
        if (!validate(value))
          problems.push(
            `${where}: NDJSON line ${i + 1} does not match: ${ajv.errorsText(validate.errors).slice(0, 300)}`,
          );
      }
      return problems;
    }
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch {
      return [...problems, `${where}: body is not JSON`];
    }
    if (!validate(json)) {
      problems.push(
        `${where}: body does not match its schema: ${ajv.errorsText(validate.errors).slice(0, 500)}`,
      );
    }
    return problems;
  };
}
