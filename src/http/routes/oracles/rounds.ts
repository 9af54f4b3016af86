import { Type } from '@fastify/type-provider-typebox';
import { oracleRounds, type RoundView } from '../../../queries/assets.ts';
import type { AppDeps } from '../../context.ts';
import { AddressParam, ChainIdPath, pageParams, TIME_WINDOW_PARAMS } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { timeWindowRequest } from '../data-request.ts';
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
            ...TIME_WINDOW_PARAMS,
            ...pageParams(ACCESS.limitMax),
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
      const { nowMs, page, clamped, model } = timeWindowRequest(request, q, deps);
      const { chainId, address } = request.params;
      const found = await oracleRounds(
        model,
        deps.history,
        { chainId, address, feed: q.feed, ...page },
        nowMs,
      );
      return sendFound(request, reply, model, nowMs, found, roundJson, { list: true, clamped });
    },
  );
}
