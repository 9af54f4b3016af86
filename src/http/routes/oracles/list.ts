import { Type } from '@fastify/type-provider-typebox';
import {
  ORACLE_PROVIDERS,
  ORACLE_TYPES,
  type OracleProvider,
  type OracleType,
} from '../../../domain/enums.ts';
import { listOracles, type OracleView } from '../../../queries/assets.ts';
import type { AppDeps } from '../../context.ts';
import { ChainIdsParam, pageParams } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { OracleRef, OracleSchema } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 1000 } as const;
const oracleJson = itemSerializer<OracleView>(OracleSchema);

export function registerOraclesList(app: Api, deps: AppDeps): void {
  app.get(
    '/oracles',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listOracles',
        summary: 'List oracles',
        description:
          "The markets' price oracles by chain id then address (page with `cursor`): type, provider, each feed's heartbeat, " +
          'deviation threshold, last update, age and staleness now, and the supply and borrow of the markets that depend on it. ' +
          '`stale=true` keeps the oracles whose stalest feed is past its heartbeat. `meta.total`: oracles matching.',
        querystring: Type.Object(
          {
            chainIds: Type.Optional(ChainIdsParam),
            provider: Type.Optional(
              Type.Unsafe<OracleProvider>({
                type: 'string',
                enum: [...ORACLE_PROVIDERS],
                description: 'Only this provider.',
              }),
            ),
            type: Type.Optional(
              Type.Unsafe<OracleType>({
                type: 'string',
                enum: [...ORACLE_TYPES],
                description: 'Only this oracle type.',
              }),
            ),
            stale: Type.Optional(
              Type.Boolean({
                description: 'true: only stale oracles (a feed past its heartbeat); false: only fresh ones.',
              }),
            ),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(OracleRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const found = listOracles(
        model,
        { chainIds, provider: q.provider, type: q.type, stale: q.stale, cursor: q.cursor, limit },
        nowMs,
      );
      return sendFound(request, reply, model, nowMs, found, oracleJson, { list: true, clamped });
    },
  );
}
