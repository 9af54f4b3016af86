import { Type } from '@fastify/type-provider-typebox';
import { type PortfolioView, portfolio } from '../../../queries/wallets.ts';
import type { AppDeps } from '../../context.ts';
import { AddressParam, ChainIdsParam } from '../../params.ts';
import { envelope, NOT_MODIFIED } from '../../schemas.ts';
import { itemSerializer, sendFound } from '../../serialize.ts';
import { dataRequest } from '../data-request.ts';
import type { Api } from '../types.ts';
import { PortfolioRef, PortfolioSchema } from './schemas.ts';

const portfolioJson = itemSerializer<PortfolioView>(PortfolioSchema);

export function registerPortfolio(app: Api, deps: AppDeps): void {
  app.get(
    '/portfolios/:address',
    {
      config: { access: { category: 'portfolio' } },
      schema: {
        operationId: 'getPortfolio',
        summary: "A wallet's portfolio",
        description:
          'A wallet across protocols and chains in scope (for Euler, with the positions of its EVC sub-accounts, the addresses ' +
          'sharing its first 19 bytes): collateral, debt, supplied and net value in USD, the weakest ' +
          'health factor, per protocol and per chain breakdowns, every position with its liquidation price (weakest first), ' +
          'and for each asset backing or owed by a borrow position the price move (all other prices fixed) that makes its ' +
          'first position liquidatable. Positions of an account in a pooled protocol (Aave, Spark per pool, Compound per ' +
          "comet, Euler per controller vault) show the account's health factor. A wallet with no position answers zeros.",
        params: Type.Object({ address: AddressParam('Wallet address.') }),
        querystring: Type.Object({ chainIds: Type.Optional(ChainIdsParam) }, { additionalProperties: false }),
        response: {
          200: envelope(PortfolioRef),
          ...NOT_MODIFIED,
        },
      },
    },
    async (request, reply) => {
      const { nowMs, chainIds, clamped, model } = dataRequest(request, request.query, deps);
      const found = portfolio(model, request.params.address.toLowerCase(), { chainIds });
      return sendFound(request, reply, model, nowMs, found, portfolioJson, { list: false, clamped });
    },
  );
}
