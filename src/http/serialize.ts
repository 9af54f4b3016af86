import fastJson from 'fast-json-stringify';
import type { FastifyRequest } from 'fastify';
import type { Clamped } from '../access/clamp.ts';
import type { ReadModel } from '../data/read-model.ts';
import type { Found } from '../queries/types.ts';
import { dataMeta, type Meta } from './envelope.ts';
import { MarketSchema, MetaSchema, PositionAtRiskSchema } from './schemas.ts';

/**
 * Serializers compiled from the response schemas (the same schemas the OpenAPI document and
 * Fastify use). Data routes serialize each item once and cache its UTF-8 bytes (markets per
 * second of oracle health, positions per dataset); an answer is then one copy of the cached
 * pieces into the envelope: no per-request serialization, no string building or encoding.
 */
const marketString = fastJson(MarketSchema) as (market: object) => string;
const positionString = fastJson(PositionAtRiskSchema) as (position: object) => string;
const metaString = fastJson(MetaSchema) as (meta: Meta) => string;

export const marketJson = (market: object): Buffer => Buffer.from(marketString(market));
export const positionJson = (position: object): Buffer => Buffer.from(positionString(position));

const LIST_HEAD = Buffer.from('{"data":[');
const ITEM_HEAD = Buffer.from('{"data":');
const COMMA = Buffer.from(',');
const LIST_META = Buffer.from('],"meta":');
const ITEM_META = Buffer.from(',"meta":');
const TAIL = Buffer.from('}');

/** `{ "data": [items], "meta": meta }` from already-serialized items. */
export function listEnvelope(items: readonly Buffer[], meta: Meta): Buffer {
  const parts: Buffer[] = [LIST_HEAD];
  for (let i = 0; i < items.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(items[i]!);
  }
  parts.push(LIST_META, Buffer.from(metaString(meta)), TAIL);
  return Buffer.concat(parts);
}

/** `{ "data": item, "meta": meta }` from an already-serialized item. */
export function itemEnvelope(item: Buffer, meta: Meta): Buffer {
  return Buffer.concat([ITEM_HEAD, item, ITEM_META, Buffer.from(metaString(meta)), TAIL]);
}

export const JSON_TYPE = 'application/json; charset=utf-8';

/** The answer of a market list (search, list): the markets' cached JSON in order, and meta. */
export function marketListAnswer(
  request: FastifyRequest,
  model: ReadModel,
  found: Found<number>,
  nowMs: number,
  clamped: Clamped | undefined,
): Buffer {
  const nowSec = Math.floor(nowMs / 1000);
  const items = found.items.map((o) => model.catalog.json(o, nowSec, marketJson));
  return listEnvelope(items, dataMeta(request, model, nowMs, found, clamped));
}
