import { Type } from '@fastify/type-provider-typebox';
import { type WalletPositionView, walletPositions } from '../../../queries/wallets.ts';
import type { AppDeps } from '../../context.ts';
import { AddressParam, ChainIdsParam, ProtocolParam, pageParams } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { PositionRef, PositionSchema } from './schemas.ts';

const ACCESS = { category: 'position', limitMax: 500 } as const;
const positionJson = itemSerializer<WalletPositionView>(PositionSchema);

export function registerWalletPositions(app: Api, deps: AppDeps): void {
  app.get(
    '/positions',
    {
      config: { access: ACCESS },
      schema: {
        operationId: 'listPositions',
        summary: "A wallet's positions",
        description:
          'Every position of a wallet in scope (borrowing or only lending; for Euler, those of its EVC sub-accounts too, each naming ' +
          'its sub-account), by market uniqueKey (page with `cursor`): the PositionAtRisk shape plus the collateral price now and ' +
          "the `liquidationPrice`, named by `liquidationPriceToken`: the price of the position's collateral token at which its " +
          "health factor (for pooled protocols the account's) reaches 1, every other price fixed, or of the token named by `asset`. " +
          '`meta.total`: positions in scope.',
        querystring: Type.Object(
          {
            address: AddressParam('Wallet address.'),
            asset: Type.Optional(
              AddressParam(
                "A token: `liquidationPrice` is then this asset's price at which each position reaches health factor 1 (its collateral's or its debt's, all else fixed; null for positions that do not hold it).",
              ),
            ),
            protocol: Type.Optional(ProtocolParam),
            chainIds: Type.Optional(ChainIdsParam),
            ...pageParams(ACCESS.limitMax),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(Type.Array(PositionRef)),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, limit, chainIds, clamped, model } = dataRequest(request, q, deps);
      const found = walletPositions(model, {
        address: q.address.toLowerCase(),
        asset: q.asset?.toLowerCase(),
        protocol: q.protocol,
        chainIds,
        cursor: q.cursor,
        limit,
      });
      return sendFound(request, reply, model, nowMs, found, positionJson, { list: true, clamped });
    },
  );
}
