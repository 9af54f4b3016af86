import fastJson from 'fast-json-stringify';
import type { Meta } from './envelope.ts';
import { MarketSchema, MetaSchema, PositionAtRiskSchema } from './schemas.ts';

/**
 * Serializers compiled from the response schemas (the same schemas the OpenAPI document and
 * Fastify use). Data routes serialize each item once and cache the JSON (markets per second of
 * oracle health, positions per dataset), then join the cached pieces into the envelope.
 */
export const marketJson = fastJson(MarketSchema) as (market: object) => string;
export const positionJson = fastJson(PositionAtRiskSchema) as (position: object) => string;
const metaJson = fastJson(MetaSchema) as (meta: Meta) => string;

/** `{ "data": [items], "meta": meta }` from already-serialized items. */
export function listEnvelope(items: readonly string[], meta: Meta): string {
  return `{"data":[${items.join(',')}],"meta":${metaJson(meta)}}`;
}

/** `{ "data": item, "meta": meta }` from an already-serialized item. */
export function itemEnvelope(item: string, meta: Meta): string {
  return `{"data":${item},"meta":${metaJson(meta)}}`;
}

export const JSON_TYPE = 'application/json; charset=utf-8';
