import { Type } from '@fastify/type-provider-typebox';
import { searchTerms } from '../../data/catalog.ts';
import type { AppDeps } from '../context.ts';
import { callerOf } from '../context.ts';
import { invalidParameter } from '../errors.ts';
import { ChainIdsParam, clampRequest, LimitParam, ProtocolParam } from '../params.ts';
import { envelope, errorResponses, MarketSchema } from '../schemas.ts';
import { JSON_TYPE, marketListAnswer } from '../serialize.ts';
import { type Api, AUTHENTICATED_ERRORS } from './types.ts';

const ROUTE_MAX = 200;

/**
 * Most distinct terms a query may have. Search costs a bounded amount per distinct term (the
 * work is linear in terms), and 8 is measured, not guessed: the longest name or label in the
 * catalog has 7 words, so any of them plus one more term fits, and 8 of the most common
 * one-letter terms, none of them cached yet, cost about 3 ms on the 20,000-market catalog of
 * the large profile (about 0.4 ms cached).
 */
export const MAX_SEARCH_TERMS = 8;

export function registerMarketsSearch(app: Api, deps: AppDeps): void {
  app.get(
    '/markets/search',
    {
      config: { access: { category: 'core', limitMax: ROUTE_MAX } },
      schema: {
        operationId: 'searchMarkets',
        tags: ['Markets'],
        summary: 'Search markets',
        description:
          'Keyword search over collateral and loan symbols and names, market label, vault symbol and the pair notation ' +
          '`COLLATERAL/LOAN`. Every term must match (AND); a term matches a word by prefix, or anywhere in it. ' +
          'Ranking: exact symbol, then prefix, then substring; ties by supply, largest first. ' +
          `At most ${MAX_SEARCH_TERMS} distinct terms.`,
        security: [{ bearerAuth: [] }],
        querystring: Type.Object(
          {
            query: Type.String({
              minLength: 1,
              maxLength: 200,
              description:
                `Search text, 1 to 100 characters after trimming, of at most ${MAX_SEARCH_TERMS} distinct ` +
                'whitespace-separated terms (a repeated term counts once; case is ignored). More terms: 400 INVALID_PARAMETER.',
              examples: ['wstETH/WETH'],
            }),
            limit: Type.Optional(LimitParam(ROUTE_MAX)),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(MarketSchema)),
          ...errorResponses(['INVALID_PARAMETER', ...AUTHENTICATED_ERRORS]),
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const text = q.query.trim();
      if (text.length < 1 || text.length > 100) {
        throw invalidParameter([
          { parameter: 'query', problem: 'must be 1 to 100 characters after trimming' },
        ]);
      }
      const terms = searchTerms(text).length;
      if (terms > MAX_SEARCH_TERMS) {
        throw invalidParameter([
          {
            parameter: 'query',
            problem: `must have at most ${MAX_SEARCH_TERMS} distinct terms (has ${terms})`,
          },
        ]);
      }
      const nowMs = deps.clock.now();
      const { limit, chainIds } = clampRequest(request, q, nowMs);
      const model = deps.data.get(callerOf(request).key.mode);
      const filter = { protocol: q.protocol, chainIds };
      const ords = model.catalog.search(text, filter, limit);
      return reply.type(JSON_TYPE).send(marketListAnswer(request, model, ords, nowMs, filter) as never);
    },
  );
}
