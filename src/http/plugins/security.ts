import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError } from '../errors.ts';

/**
 * Security of every answer: fixed security headers, CORS, request ids (the caller's own when
 * valid), no key ever logged (masked in every field of a log line, however encoded), malformed requests answered in
 * the documented shape, and 503 once the server is closing.
 */

/** Headers a browser client may read (CORS). */
const EXPOSED_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'ratelimit',
  'ratelimit-policy',
  'retry-after',
  'idempotent-replayed',
];

/** Security headers on the raw answers below, which bypass Fastify's hooks. */
const RAW_HEADERS =
  'Content-Type: application/json; charset=utf-8\r\nX-Content-Type-Options: nosniff\r\n' +
  "Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\nConnection: close\r\n";

/**
 * Requests Node's HTTP parser rejects before Fastify sees them (malformed request line, bad
 * version, header without colon, NUL bytes, headers over 16 KB, too slow): a "Errors" (docs/decisions.md) body, then close.
 */
export function clientErrorHandler(this: FastifyInstance, err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  let status = 400;
  let body: Record<string, unknown> = {
    error: 'INVALID_PARAMETER',
    message: 'Malformed HTTP request.',
    details: [{ parameter: 'request', problem: 'is not a valid HTTP/1.1 request' }],
  };
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    status = 408;
    body = { error: 'REQUEST_TIMEOUT', message: 'The request was not received in time.' };
  } else if (err.code === 'HPE_HEADER_OVERFLOW') {
    status = 431;
    body = { error: 'HEADERS_TOO_LARGE', message: 'The request headers are too large (16 KB at most).' };
  }
  this.log.debug({ code: err.code, status }, 'client error');
  if (socket.writable && socket.bytesWritten === 0) {
    const json = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n${RAW_HEADERS}` +
        `X-Request-Id: req_${randomBytes(12).toString('base64url')}\r\n` +
        `Content-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    );
  }
  socket.destroy();
}

/** Anything shaped like an API key, in text we log (a key sent by mistake in the URL, a header…). */
const KEY_IN_TEXT = /lrds_(live|test)_[0-9a-z]+/gi;
const ASCII_ESCAPE = /%([0-7][0-9a-f])/gi;
/** Layers of percent-encoding undone at most; text encoded deeper is not logged at all. */
const MAX_DECODES = 16;
const TOO_DEEP = '[not logged: percent-encoded too many times]';

/**
 * The text with its ASCII percent-escapes decoded until nothing changes (`%2525256C` → `%25256C`
 * → … → `l`): keys are ASCII, so this reveals one however it was spelled. Null when the text is
 * still changing after MAX_DECODES layers (no request needs that many).
 */
function decodeAsciiEscapes(text: string): string | null {
  let s = text;
  for (let i = 0; s.includes('%'); i++) {
    const next = s.replace(ASCII_ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
    if (next === s) return s;
    if (i === MAX_DECODES) return null;
    s = next;
  }
  return s;
}

/** Whether `text` holds something shaped like a key once decoded (or cannot be decoded safely). */
function holdsKey(text: string): boolean {
  if (!text.includes('%') && !/lrds_/i.test(text)) return false;
  const decoded = decodeAsciiEscapes(text);
  if (decoded === null) return true;
  KEY_IN_TEXT.lastIndex = 0;
  return KEY_IN_TEXT.test(decoded);
}

/**
 * Text as logged: when it holds something shaped like a key, however percent-encoded, it is
 * logged decoded with the key masked (`lrds_live_[redacted]`); text encoded too deeply to tell
 * is not logged.
 */
export function maskKeys(text: string): string {
  if (!holdsKey(text)) return text;
  const decoded = decodeAsciiEscapes(text);
  if (decoded === null) return TOO_DEEP;
  return decoded.replace(KEY_IN_TEXT, (_, mode: string) => `lrds_${mode.toLowerCase()}_[redacted]`);
}

/** Every string of a parsed log line (names and values, at any depth) with its keys masked. */
function maskDeep(value: unknown): unknown {
  if (typeof value === 'string') return maskKeys(value);
  if (Array.isArray(value)) return value.map(maskDeep);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [maskKeys(k), maskDeep(v)]));
  return value;
}

/**
 * The last step of every log line (pino's streamWrite hook): a line that holds something shaped
 * like a key in any field (the URL, the Host header, any header a serializer logs, an error
 * message), however percent-encoded, is written with every field masked. Lines without one
 * (nearly all) are written as they are, after one scan.
 */
export function maskKeysInLogLine(line: string): string {
  if (!holdsKey(line)) return line;
  try {
    return `${JSON.stringify(maskDeep(JSON.parse(line)))}\n`;
  } catch {
    return `${maskKeys(line.trimEnd())}\n`;
  }
}

/** Fastify's request log fields, with any key in the URL or the Host header masked. */
export function maskedRequest(req: FastifyRequest) {
  return {
    method: req.method,
    url: maskKeys(req.url),
    host: maskKeys(req.host),
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/**
 * Security headers of every answer, the set helmet's defaults would send, fixed once: a JSON
 * API that nothing may frame or load (the docs page sets its own CSP). Set as one constant
 * object because applying helmet's middleware chain cost a tenth of the time of a request.
 */
const SECURITY_HEADERS = Object.freeze({
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'cross-origin',
  'origin-agent-cluster': '?1',
  'referrer-policy': 'no-referrer',
  'strict-transport-security': 'max-age=31536000; includeSubDomains',
  'x-content-type-options': 'nosniff',
  'x-dns-prefetch-control': 'off',
  'x-download-options': 'noopen',
  'x-frame-options': 'SAMEORIGIN',
  'x-permitted-cross-domain-policies': 'none',
  'x-xss-protection': '0',
});

const REQUEST_ID_PREFIX = randomBytes(6).toString('base64url');
const VALID_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * A request id the caller supplied and we can safely echo and log: `X-Request-Id` of 1 to 128
 * characters from [A-Za-z0-9._:-], or else the trace id of a valid W3C `traceparent` (not all
 * zeros). Anything else is ignored (never echoed: no header or log injection).
 */
export function incomingRequestId(headers: import('node:http').IncomingHttpHeaders): string | null {
  const id = headers['x-request-id'];
  // never one shaped like a key: it would be logged as it is
  if (typeof id === 'string' && VALID_REQUEST_ID.test(id) && !/lrds_(live|test)_/i.test(id)) return id;
  const tp = headers.traceparent;
  if (typeof tp === 'string') {
    const traceId = TRACEPARENT.exec(tp)?.[1];
    if (traceId !== undefined && !/^0+$/.test(traceId) && !tp.startsWith('ff')) return traceId;
  }
  return null;
}

let requestSeq = 0;

/**
 * The request id: the caller's own when it sends a valid one (X-Request-Id, else the trace id of
 * a W3C traceparent), so its logs and ours can be joined; otherwise a random prefix per process
 * and a counter: unique across instances, and no CSPRNG call per request.
 */
export function requestId(req: import('node:http').IncomingMessage): string {
  return incomingRequestId(req.headers) ?? `req_${REQUEST_ID_PREFIX}${(requestSeq++).toString(36)}`;
}

/** What every route reads from its request, set here first. */
declare module 'fastify' {
  interface FastifyRequest {
    /** performance.now() when the request arrived (meta.latencyMs). */
    startedAt: number;
  }
}

/** Connections accepted once the server was told to stop: their requests are answered 503. */
const refusedSockets = new WeakSet<Socket>();

/**
 * Requests on `socket` get 503 SERVICE_UNAVAILABLE with `Connection: close` and Retry-After, at
 * once, before any other work: a connection accepted during shutdown (it waited in the kernel's
 * backlog) is answered cheaply, however many there are, rather than reset.
 */
export function refuseRequestsOn(socket: Socket): void {
  refusedSockets.add(socket);
}

export const securityPlugin = fp(
  async (app: FastifyInstance) => {
    app.decorateRequest('startedAt', 0);
    let closing = false;
    app.addHook('preClose', async () => {
      closing = true;
    });
    app.addHook('onRequest', async (request, reply) => {
      request.startedAt = performance.now();
      reply.headers(SECURITY_HEADERS);
      reply.header('x-request-id', request.id);
      if (closing || refusedSockets.has(request.raw.socket)) {
        throw new ApiError(
          'SERVICE_UNAVAILABLE',
          closing
            ? 'The server is shutting down; retry the request.'
            : 'The server is shutting down and takes no new connection; retry the request.',
          {},
          { 'retry-after': '1', connection: 'close' },
        );
      }
    });
    await app.register(cors, {
      origin: '*',
      methods: ['GET', 'POST', 'DELETE'],
      allowedHeaders: ['authorization', 'content-type', 'idempotency-key'],
      exposedHeaders: EXPOSED_HEADERS,
      maxAge: 600,
      // An OPTIONS without Origin is answered like a preflight (204), not with a text/plain 400.
      strictPreflight: false,
    });
  },
  { name: 'lrds-security' },
);
