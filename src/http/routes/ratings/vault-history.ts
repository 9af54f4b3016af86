import { Type } from '@fastify/type-provider-typebox';
import { ratingHistory } from '../../../queries/ratings.ts';
import type { AppDeps } from '../../context.ts';
import {
  AddressParam,
  ChainIdPath,
  CursorParam,
  EndDateParam,
  LimitParam,
  parseDate,
  parseEndDate,
  StartDateParam,
} from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { RatingChangeRef } from './schemas.ts';
import { ratingChangeJson } from './shared.ts';

const ACCESS = { category: 'ratings', limitMax: 1000, chainParam: 'chainId' } as const;

export function registerVaultRatingHistory(app: Api, deps: AppDeps): void {
  app.get(
    '/ratings/vaults/:chainId/:address/history',
    {
      config: { access: ACCESS, errors: ['VAULT_NOT_FOUND'] },
      schema: {
        operationId: 'getVaultRatingHistory',
        summary: "A vault's rating history",
        description:
          "The changes of a vault's rating, oldest first, recorded as for markets (a grade change, a score move of 2 " +
          "points or more, a new methodology version). `startDate` is raised to your tier's history window " +
          '(meta.clamped); `endDate` defaults to now. Page with `cursor`.',
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Vault contract address.') }),
        querystring: Type.Object(
          {
            startDate: Type.Optional(StartDateParam),
            endDate: Type.Optional(EndDateParam),
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            cursor: Type.Optional(CursorParam),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(RatingChangeRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { chainId, address } = request.params;
      const { nowMs, limit, startMs, clamped, model } = dataRequest(request, q, deps);
      const toMs = parseEndDate(q.endDate, parseDate(q.startDate, 'startDate')) ?? nowMs + 1;
      const found = await ratingHistory(
        model,
        deps.ratings,
        { kind: 'vault', chainId, address },
        { fromMs: startMs ?? 0, toMs, cursor: q.cursor, limit },
      );
      return sendFound(request, reply, model, nowMs, found, ratingChangeJson, { list: true, clamped });
    },
  );
}
