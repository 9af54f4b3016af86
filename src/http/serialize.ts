import { hash } from 'node:crypto';
import { Readable } from 'node:stream';
import fastJson from 'fast-json-stringify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Clamped } from '../access/clamp.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { OracleHealth } from '../domain/types.ts';
import type { Found } from '../queries/types.ts';
import { dataMeta, latencyMs, type Meta } from './envelope.ts';
import { MarketSchema } from './routes/markets/schemas.ts';
import { OracleHealthSchema } from './routes/oracles/schemas.ts';
import { PositionAtRiskSchema } from './routes/risk/schemas.ts';
import { MetaSchema } from './schemas.ts';

/**
 * Serializers compiled from the response schemas (the same schemas the OpenAPI document and
 * Fastify use). Data routes serialize each item once and cache its UTF-8 bytes (markets until
 * they change, their oracle health apart; positions per dataset); an answer is then one copy
 * of the cached pieces into the envelope: no per-request serialization, no string building or
 * encoding.
 */
const marketString = fastJson(MarketSchema) as (market: object) => string;
const healthString = fastJson(OracleHealthSchema as object) as (health: OracleHealth | null) => string;
const positionString = fastJson(PositionAtRiskSchema) as (position: object) => string;
const metaString = fastJson(MetaSchema) as (meta: Meta) => string;

export const positionJson = (position: object): Buffer => Buffer.from(positionString(position));

/** A market's JSON ends with its oracle health (MarketSchema's last property). */
const HEALTH_TAIL = '"oracleHealth":null}';
const NULL_HEALTH = Buffer.from('null}');

/** A market's JSON up to its oracle health's value: `{…,"oracleHealth":`. */
function marketHead(market: object): Buffer {
  const s = marketString({ ...market, oracleHealth: null });
  if (!s.endsWith(HEALTH_TAIL)) throw new Error('MarketSchema must end with oracleHealth');
  return Buffer.from(s.slice(0, -NULL_HEALTH.length));
}

/**
 * The bytes that close a market's JSON: its oracle health and `}`. The health is a function of
 * three integers, so markets whose feeds read the same share them; bounded.
 */
const healthTails = new Map<string, Buffer>();

function healthTail(h: OracleHealth | null): Buffer {
  if (h === null) return NULL_HEALTH;
  const key = `${h.lastUpdateTimestamp}:${h.secondsSinceUpdate}:${h.expectedHeartbeatSeconds}`;
  let tail = healthTails.get(key);
  if (tail === undefined) {
    if (healthTails.size >= 50_000) healthTails.clear();
    tail = Buffer.from(`${healthString(h)}}`);
    healthTails.set(key, tail);
  }
  return tail;
}

/** A market of a model as JSON pieces at `nowSec` (Catalog.json). */
export function marketJson(model: ReadModel, ord: number, nowSec: number): Item {
  return model.catalog.json(ord, nowSec, marketHead, healthTail);
}

const LIST_HEAD = Buffer.from('{"data":[');
const ITEM_HEAD = Buffer.from('{"data":');
const COMMA = Buffer.from(',');
const LIST_META = Buffer.from('],"meta":');
const ITEM_META = Buffer.from(',"meta":');

/** A serialized item: its JSON bytes, or their pieces in order. */
export type Item = Uint8Array | readonly Uint8Array[];

/** An answer being built: its serialized items (a list or one item) and its meta. */
export interface DataAnswer {
  items: readonly Item[];
  list: boolean;
  meta: Meta;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
/** docs/decisions.md "Compression and caching": data may be cached, but only by the client, and revalidated every time. */
export const DATA_CACHE_CONTROL = 'private, max-age=0, must-revalidate';

/** SHA-1 of each cached item's bytes, computed once per buffer (cached items are reused). */
const itemDigests = new WeakMap<Uint8Array, Buffer>();

function digestOf(item: Uint8Array): Buffer {
  let d = itemDigests.get(item);
  if (d === undefined) {
    d = hash('sha1', item, 'buffer');
    itemDigests.set(item, d);
  }
  return d;
}

/**
 * The strong ETag of an answer (docs/decisions.md "Compression and caching"): a hash of the data it carries (its items' digests, in
 * order) and of its meta but latencyMs, so the same data gives the same tag on every request
 * and every process, and any change of an item, the order, freshness, source, clamps, total or
 * asOf gives another.
 */
export function etagOf(a: DataAnswer, meta = metaString({ ...a.meta, latencyMs: 0 })): string {
  // One hash of the joined digests (the same bytes in the same order as one update each, so the
  // same tag): a call into the hash per item was a third of the cost of a 50-item answer.
  const parts: Uint8Array[] = [a.list ? LIST_TAG : ITEM_TAG];
  for (const item of a.items)
    if (item instanceof Uint8Array) parts.push(digestOf(item));
    else for (const piece of item) parts.push(digestOf(piece));
  parts.push(Buffer.from(meta));
  return `"${hash('sha1', Buffer.concat(parts), 'base64url').slice(0, 27)}"`;
}

const LIST_TAG = Buffer.from('l');
const ITEM_TAG = Buffer.from('i');

/**
 * The tag of a representation compressed with `coding` (RFC 9110: a strong ETag names one
 * representation, so the brotli and gzip bodies of an answer are tagged apart from the
 * identity one): `"<tag>-br"`, `"<tag>-gzip"`.
 */
export function codingEtag(etag: string, coding: string): string {
  return `${etag.slice(0, -1)}-${coding}"`;
}

const CODING_SUFFIX = /-(?:br|gzip)"$/;

/**
 * The tag of If-None-Match that matches `etag` in any of its codings (weak comparison, as RFC
 * 9110 says for it), or null: a client that holds the brotli body revalidates it as well as one
 * that holds the identity body.
 */
export function noneMatch(header: string | undefined, etag: string): string | null {
  if (header === undefined) return null;
  for (const raw of header.split(',')) {
    const tag = raw.trim();
    if (tag === '*') return etag;
    const opaque = tag.startsWith('W/') ? tag.slice(2) : tag;
    if (opaque === etag || opaque.replace(CODING_SUFFIX, '"') === etag) return opaque;
  }
  return null;
}

/**
 * An answer as bytes but for the value of meta.latencyMs, which is the request's own: the body
 * before it (in pieces) and after it, and the answer's ETag.
 */
export interface Assembled {
  before: readonly Uint8Array[];
  after: Uint8Array;
  etag: string;
}

/** meta.latencyMs is MetaSchema's first property. */
const LATENCY_HEAD = '{"latencyMs":';
const LATENCY_KEY = Buffer.from(LATENCY_HEAD);

export function assemble(a: DataAnswer): Assembled {
  const meta = metaString({ ...a.meta, latencyMs: 0 });
  if (!meta.startsWith(`${LATENCY_HEAD}0`)) throw new Error('MetaSchema must start with latencyMs');
  const before: Uint8Array[] = [a.list ? LIST_HEAD : ITEM_HEAD];
  a.items.forEach((item, i) => {
    if (i > 0) before.push(COMMA);
    if (item instanceof Uint8Array) before.push(item);
    else before.push(...item);
  });
  before.push(a.list ? LIST_META : ITEM_META, LATENCY_KEY);
  return { before, after: Buffer.from(`${meta.slice(LATENCY_HEAD.length + 1)}}`), etag: etagOf(a, meta) };
}

/**
 * Sends an assembled answer: ETag and Cache-Control always; 304 with no body when the client's
 * If-None-Match holds the tag (the request was counted like any other); else the envelope with
 * this request's latencyMs, one copy of the pieces.
 */
export function sendAssembled(request: FastifyRequest, reply: FastifyReply, x: Assembled): FastifyReply {
  reply.header('etag', x.etag);
  reply.header('cache-control', DATA_CACHE_CONTROL);
  const matched = noneMatch(request.headers['if-none-match'], x.etag);
  // A 304 names the representation the client holds (the compression hook leaves it alone).
  if (matched !== null) return reply.header('etag', matched).code(304).send();
  const latency = Buffer.from(String(latencyMs(request)));
  const pieces = [...x.before, latency, x.after];
  let size = 0;
  for (const p of pieces) size += p.length;
  reply.type(JSON_TYPE);
  // Small answers, and answers not from the cache (a piece per item), are joined: one write.
  if (size < WRITE_IN_PIECES_FROM || pieces.length > MAX_PIECES_WRITTEN)
    return reply.send(Buffer.concat(pieces, size) as never);
  // A large cached answer (the 1,000-market list: 1.5 MB) is written as its pieces, not copied
  // into a fresh buffer per request: that copy, its page faults and the collection of the
  // buffer were two thirds of the CPU of such an answer.
  reply.header('content-length', size);
  return reply.send(piecesStream(pieces));
}

/**
 * A stream of `pieces`, all pushed on its first read: Readable.from's async iteration cost a
 * promise and a microtask per piece, and its machinery was about a tenth of the CPU of an
 * 80 KB search answer.
 */
function piecesStream(pieces: readonly Uint8Array[]): Readable {
  return new Readable({
    read() {
      for (const piece of pieces) this.push(piece);
      this.push(null);
    },
  });
}

/** Answers from this size up, made of a few pieces (a cached answer has three), are written without joining them. */
const WRITE_IN_PIECES_FROM = 48 * 1024;
const MAX_PIECES_WRITTEN = 8;

/** Sends a data answer (see sendAssembled). */
export function sendData(request: FastifyRequest, reply: FastifyReply, a: DataAnswer): FastifyReply {
  return sendAssembled(request, reply, assemble(a));
}

/** The answer of a market list (search, list): the markets' cached JSON in order, and meta. */
export function marketListAnswer(
  request: FastifyRequest,
  model: ReadModel,
  found: Found<number>,
  nowMs: number,
  clamped: Clamped | undefined,
): DataAnswer {
  const nowSec = Math.floor(nowMs / 1000);
  const items = found.items.map((o) => marketJson(model, o, nowSec));
  return { items, list: true, meta: dataMeta(request, model, nowMs, found, clamped) };
}

/** A serializer compiled from an item's response schema: the item's JSON, as bytes. */
export function itemSerializer<T extends object>(schema: object): (item: T) => Buffer {
  const stringify = fastJson(schema) as (item: T) => string;
  return (item) => Buffer.from(stringify(item));
}

/**
 * Sends what a query found: its items serialized by `json` (a list, or the one item), with the
 * meta of the answer (total and nextCursor when the query gives them).
 */
export function sendFound<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  model: ReadModel,
  nowMs: number,
  found: Found<T>,
  json: (item: T) => Uint8Array,
  options: { list: boolean; clamped?: Clamped | undefined },
): FastifyReply {
  return sendData(request, reply, {
    items: found.items.map(json),
    list: options.list,
    meta: dataMeta(request, model, nowMs, found, options.clamped),
  });
}
