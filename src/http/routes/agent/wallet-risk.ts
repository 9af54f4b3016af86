import { Type } from '@fastify/type-provider-typebox';
import { DEFAULT_TARGET_HEALTH_FACTOR, type WalletRiskView, walletRisk } from '../../../queries/agent.ts';
import type { RouteDeps } from '../../context.ts';
import { dataMeta } from '../../envelope.ts';
import { AddressParam, ChainIdsParam } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendAssembled } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { WalletRiskRef, WalletRiskSchema } from './schemas.ts';

const walletRiskJson = itemSerializer<WalletRiskView>(WalletRiskSchema);

export function registerWalletRisk(app: Api, deps: RouteDeps): void {
  app.get(
    '/agent/wallet-risk/:address',
    {
      config: { access: { category: 'agent' } },
      schema: {
        operationId: 'agentWalletRisk',
        summary: "A wallet's risk, for agents",
        description:
          "A wallet's borrow positions in the chains in scope, weakest first, with a risk level, flags with their reasons " +
          '(LIQUIDATABLE below health factor 1, NEAR_LIQUIDATION below 1.1, BELOW_TARGET, STALE_ORACLE), and for each ' +
          'position the debt to repay, or the collateral to add, that brings it to `targetHealthFactor`. Deterministic: ' +
          'the same data gives the same answer.',
        params: Type.Object({ address: AddressParam('Wallet address.') }),
        querystring: Type.Object(
          {
            targetHealthFactor: Type.Optional(
              Type.Number({
                exclusiveMinimum: 1,
                maximum: 10,
                description: `The health factor to bring positions back to (default ${DEFAULT_TARGET_HEALTH_FACTOR}; 1 < x <= 10).`,
                examples: [1.5],
              }),
            ),
            chainIds: Type.Optional(ChainIdsParam),
          },
          { additionalProperties: false },
        ),
        response: {
          200: envelope(WalletRiskRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const q = request.query;
      const { nowMs, chainIds, clamped, model } = dataRequest(request, q, deps);
      const address = request.params.address.toLowerCase();
      return sendAssembled(
        request,
        reply,
        deps.answers.answer(request, model, nowMs, () => {
          const found = walletRisk(
            model,
            address,
            { chainIds, targetHealthFactor: q.targetHealthFactor ?? DEFAULT_TARGET_HEALTH_FACTOR },
            Math.floor(nowMs / 1000),
          );
          return {
            items: found.items.map(walletRiskJson),
            list: false,
            meta: dataMeta(request, model, nowMs, found, clamped),
          };
        }),
      );
    },
  );
}
