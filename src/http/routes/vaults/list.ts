import { Type } from '@fastify/type-provider-typebox';
import { listVaults, type VaultView } from '../../../queries/vaults.ts';
import type { AppDeps } from '../../context.ts';
import { ChainIdsParam, pageParams } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { VaultRef, VaultSchema } from './schemas.ts';

const ACCESS = { category: 'core', limitMax: 500 } as const;
const vaultJson = itemSerializer<VaultView>(VaultSchema);

export function registerVaultsList(app: Api, deps: AppDeps): void {
  app.get(
    '/vaults',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listVaults',
        summary: 'List vaults',
        description:
          'Morpho vaults with their curator and Euler vaults with their governor, by chain id then address (page with ' +
          '`cursor`): asset, total assets in USD, APY net of fee, and the allocation by market with its share, supply cap, ' +
          'strategy risk level and oracle health. `meta.total`: vaults matching.',
        querystring: Type.Object(
          {
            protocol: Type.Optional(
              Type.Unsafe<'morpho' | 'euler'>({
                type: 'string',
                enum: ['morpho', 'euler'],
                description: 'Only this protocol.',
              }),
            ),
            chainIds: Type.Optional(ChainIdsParam),
            asset: Type.Optional(
              Type.String({
                minLength: 1,
                maxLength: 64,
                description: 'Only vaults of this asset symbol (case-insensitive).',
                examples: ['USDC'],
              }),
            ),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(VaultRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const found = listVaults(
        model,
        { protocol: q.protocol, chainIds, asset: q.asset, cursor: q.cursor, limit },
        nowMs,
      );
      return sendFound(request, reply, model, nowMs, found, vaultJson, { list: true, clamped });
    },
  );
}
