import { Type } from '@fastify/type-provider-typebox';
import { oracleRounds, type RoundView } from '../../../queries/assets.ts';
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
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { OracleRoundRef, OracleRoundSchema } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 10_000, chainParam: 'chainId' } as const;
const roundJson = itemSerializer<RoundView>(OracleRoundSchema);

export function registerOracleRounds(app: Api, deps: AppDeps): void {
  app.get(
    '/oracles/:chainId/:address/rounds',
    {
      config: { access: ACCESS, errors: ['ORACLE_NOT_FOUND'] },
      schema: {
        operationId: 'getOracleRounds',
        summary: 'Oracle rounds',
        description:
          "The answers the oracle's feeds published, oldest first (by time, then feed, then round), in the time range: " +
          "`startDate` is raised to your tier's history window (meta.clamped), `endDate` defaults to now. Page with `cursor`.",
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Oracle contract address.') }),
        querystring: Type.Object(
          {
            feed: Type.Optional(AddressParam('Only this feed of the oracle.')),
            startDate: Type.Optional(StartDateParam),
            endDate: Type.Optional(EndDateParam),
            limit: Type.Optional(LimitParam(ACCESS.limitMax)),
            cursor: Type.Optional(CursorParam),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(OracleRoundRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, startMs, clamped, model } = dataRequest(request, q, deps);
      const toMs = parseEndDate(q.endDate, parseDate(q.startDate, 'startDate')) ?? nowMs + 1;
      const found = await oracleRounds(
        model,
        deps.history,
        {
          chainId: request.params.chainId,
          address: request.params.address,
          feed: q.feed,
          fromMs: startMs ?? 0,
          toMs,
          cursor: q.cursor,
          limit,
        },
        nowMs,
      );
      return sendFound(request, reply, model, nowMs, found, roundJson, { list: true, clamped });
    },
  );
}
