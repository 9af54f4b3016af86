import { Readable } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { Type } from '@fastify/type-provider-typebox';
import fastJson from 'fast-json-stringify';
import { type LiquidationView, liquidationScope, liquidations } from '../../../queries/history.ts';
import type { AppDeps } from '../../context.ts';
import { dataMeta, type Meta } from '../../envelope.ts';
import {
  AddressParam,
  ChainIdsParam,
  ProtocolParam,
  pageParams,
  requireMarketId,
  TIME_WINDOW_PARAMS,
} from '../../params.ts';
import { DATA_HEADERS, MetaRef, MetaSchema } from '../../schemas.ts';
import { DATA_CACHE_CONTROL, JSON_TYPE } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { LiquidationRef } from './schemas.ts';

const ACCESS = { category: 'position', limitMax: 500_000 } as const;
export const NDJSON_TYPE = 'application/x-ndjson';
/** Characters of body written at a time (JSON is ASCII: bytes). */
const CHUNK_CHARS = 32 * 1024;
/**
 * One liquidation's JSON. The view has exactly the schema's fields, in its order (the schema's
 * serializer gives the same bytes: tested), and JSON.stringify writes its numbers straight into
 * the output, where the schema's serializer turns each into a string first (`'' + n`): V8 keeps
 * such strings in its number-to-string cache, which lives in the old generation, so every one of
 * the 3,000,000 numbers of a 500,000-row answer was kept alive past a scavenge, promoted, and
 * the process grew by 20 to 90 MB per answer until a full collection.
 */
export const liquidationJson = (item: LiquidationView): string => JSON.stringify(item);
const metaString = fastJson(MetaSchema) as (meta: Meta) => string;
/** A streamed answer carries no ETag: its data is not known before its body is written. */
const { ETag: _etag, ...STREAM_HEADERS } = DATA_HEADERS;

/** Whether the client asked for NDJSON (docs/decisions.md "Lists, pages and streams"): `Accept` names application/x-ndjson. */
function wantsNdjson(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*application\/x-ndjson\s*(;|,|$)/i.test(accept);
}

export function registerLiquidations(app: Api, deps: AppDeps): void {
  app.get(
    '/liquidations',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listLiquidations',
        summary: 'Liquidations',
        description:
          'Liquidations, newest first (time, then chain, tx hash, log index), with the collateral seized, the debt repaid and ' +
          'any bad debt, in token units and USD (null where the token has no USD price). Streamed: the body is written as it is read, whatever `limit` (up to ' +
          '500,000), so memory stays flat on both sides; send `Accept: application/x-ndjson` for one JSON object per line ' +
          '(the items, then a last line `{"meta": …}`). `startDate` is raised to your tier\'s history window. Page with ' +
          '`cursor`. A streamed answer carries no ETag (it is not known before the body is written).',
        querystring: Type.Object(
          {
            ...TIME_WINDOW_PARAMS,
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            marketId: Type.Optional(
              Type.String({
                maxLength: 256,
                description:
                  'Only this market (uniqueKey; a market no longer served keeps its liquidations).',
              }),
            ),
            borrower: Type.Optional(AddressParam('Only liquidations of this borrower.')),
            liquidator: Type.Optional(AddressParam('Only liquidations by this liquidator.')),
            minRepaidUsd: Type.Optional(
              Type.Number({
                minimum: 0,
                maximum: 1e15,
                description:
                  'Only liquidations that repaid at least this much, USD (one whose repayment has no known USD value never matches).',
              }),
            ),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: {
            description:
              'The liquidations and meta: a JSON envelope, or NDJSON lines (each liquidation, then `{"meta": …}`) when asked for.',
            headers: STREAM_HEADERS,
            content: {
              'application/json': {
                schema: Type.Object({ data: Type.Array(LiquidationRef), meta: MetaRef }),
              },
              [NDJSON_TYPE]: {
                schema: {
                  description: 'One line per liquidation, then one line with the meta.',
                  anyOf: [LiquidationRef, Type.Object({ meta: MetaRef }, { additionalProperties: false })],
                },
              },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const market = q.marketId === undefined ? undefined : requireMarketId(q.marketId, 'marketId');
      const { nowMs, limit, chainIds, startMs, endMs, clamped, model } = timeWindowRequest(request, q, deps);
      const scope = { protocol: q.protocol, chainIds };
      const pages = liquidations(model, deps.history, {
        ...scope,
        market: market?.key,
        borrower: q.borrower?.toLowerCase(),
        liquidator: q.liquidator?.toLowerCase(),
        minRepaidUsd: q.minRepaidUsd,
        // Bounded only where the request says so.
        fromMs: startMs,
        toMs: endMs,
        cursor: q.cursor,
        limit,
      });
      // The first page is read before the answer starts: a store that cannot answer is a 503,
      // not a cut stream.
      const first = await pages.next();
      const ndjson = wantsNdjson(request.headers.accept);
      const protocols = new Set<string>();
      const body = async function* () {
        let n = 0;
        if (!ndjson) yield '{"data":[';
        let step = first;
        while (!step.done) {
          // Written in pieces of about 32 KB: the stream stops pulling as soon as its buffer is
          // full, within a page as well as between pages.
          let chunk = '';
          const items: (LiquidationView | undefined)[] = step.value;
          for (let i = 0; i < items.length; i++) {
            const item = items[i];
            if (item === undefined) continue;
            // Let go of each item once written: what a scavenge finds alive is promoted.
            items[i] = undefined;
            protocols.add(item.protocol);
            chunk += ndjson ? `${liquidationJson(item)}\n` : `${n > 0 ? ',' : ''}${liquidationJson(item)}`;
            n++;
            if (chunk.length >= CHUNK_CHARS) {
              yield chunk;
              chunk = '';
            }
          }
          if (chunk.length > 0) yield chunk;
          // A turn of the event loop between pages: a fast reader never keeps the loop to
          // itself (the store's reads and the socket's writes may all complete at once).
          await nextTurn();
          step = await pages.next();
        }
        const meta = dataMeta(
          request,
          model,
          nowMs,
          {
            itemProtocols: [...protocols],
            scopeProtocols: market ? [market.protocol] : liquidationScope(model, scope),
            ...(step.value.nextCursor ? { nextCursor: step.value.nextCursor } : {}),
          },
          clamped,
        );
        yield ndjson ? `{"meta":${metaString(meta)}}\n` : `],"meta":${metaString(meta)}}`;
      };
      reply.header('cache-control', DATA_CACHE_CONTROL);
      reply.type(ndjson ? `${NDJSON_TYPE}; charset=utf-8` : JSON_TYPE);
      // Pulled as the socket drains: a slow reader holds the read of the next page back.
      return reply.send(
        Readable.from(body(), { objectMode: false, encoding: 'utf8', highWaterMark: 64 * 1024 }),
      );
    },
  );
}
