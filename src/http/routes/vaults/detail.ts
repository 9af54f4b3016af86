import { Type } from '@fastify/type-provider-typebox';
import { getVault, type VaultView } from '../../../queries/vaults.ts';
import type { AppDeps } from '../../context.ts';
import { callerOf } from '../../context.ts';
import { AddressParam, ChainIdPath } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import type { Api } from '../types.ts';
import { VaultRef, VaultSchema } from './schemas.ts';

const vaultJson = itemSerializer<VaultView>(VaultSchema);

export function registerVaultDetail(app: Api, deps: AppDeps): void {
  app.get(
    '/vaults/:chainId/:address',
    {
      config: { access: { category: 'core', chainParam: 'chainId' }, errors: ['VAULT_NOT_FOUND'] },
      schema: {
        operationId: 'getVault',
        summary: 'Get one vault',
        description: 'One vault with its allocation by market, as in the list.',
        params: Type.Object({ chainId: ChainIdPath, address: AddressParam('Vault contract address.') }),
        querystring: Type.Object({}, { additionalProperties: false }),
        response: {
          200: envelope(VaultRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const nowMs = deps.clock.now();
      const model = deps.data.get(callerOf(request).key.mode);
      const found = getVault(model, request.params.chainId, request.params.address, nowMs);
      return sendFound(request, reply, model, nowMs, found, vaultJson, { list: false });
    },
  );
}
