import { Type } from '@fastify/type-provider-typebox';
import { getOracle, type OracleDetailView } from '../../../queries/assets.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { AddressParam, ChainIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import type { Api } from '../types.ts';
import { OracleDetailRef, OracleDetailSchema } from './schemas.ts';

const oracleJson = itemSerializer<OracleDetailView>(OracleDetailSchema);

export function registerOracleDetail(app: Api, deps: AppDeps): void {
  app.get(
    '/oracles/:chainId/:address',
    {
      config: { access: { category: 'core', chainParam: 'chainId' }, errors: ['ORACLE_NOT_FOUND'] },
      schema: {
        operationId: 'getOracle',
        summary: 'Get one oracle',
        description:
          "One oracle: its feeds with their freshness now (a feed is stale once its last update is older than its heartbeat; the oracle's health is its stalest feed's), and the markets that depend on it with their supply at stake.",
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Oracle contract address.') }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(OracleDetailRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const nowMs = deps.clock.now();
      const model = deps.data.get(callerOf(request).key.mode);
      const found = getOracle(model, request.params.chainId, request.params.address, nowMs);
      return sendFound(request, reply, model, nowMs, found, oracleJson, { list: false });
    },
  );
}
