import { Type } from '@fastify/type-provider-typebox';
import { ADDRESS, nullable, ProtocolSchema, ref, UsdOrNull } from '../../schemas.ts';
import { FeedStatusSchema } from '../oracles/schemas.ts';

/** The tokens area's schemas: a token with its USD price and where it comes from. */

const PriceSourceSchema = Type.Unsafe<{
  kind: 'feed' | 'oracle' | 'api';
  address: string | null;
  description: string;
} | null>({
  type: ['object', 'null'],
  properties: {
    kind: {
      type: 'string',
      enum: ['feed', 'oracle', 'api'],
      description:
        "'feed': a Chainlink feed of the sources file; 'oracle': the market's own oracle; 'api': an API's price (the Morpho API's priceUsd).",
    },
    address: {
      type: ['string', 'null'],
      description: "The feed's or the oracle's address; null for an API.",
    },
    description: {
      type: 'string',
      description:
        "The feed's description (`X / ETH × ETH / USD` through ETH), the oracle's type and provider, or the API's field.",
    },
  },
  required: ['kind', 'address', 'description'],
  additionalProperties: false,
  description:
    "Where priceUsd comes from: the price source of the market priceUsd is taken from, as the data's source recorded it. Data that records none (the sandbox): the USD-quoted feed of the token (or of the asset it wraps) on its chain, else the oracle of its largest collateral market. null when none is known.",
});

const TokenProperties = {
  chainId: Type.Integer({ examples: [1] }),
  address: ADDRESS,
  symbol: Type.String({ examples: ['WETH'] }),
  name: Type.String({ examples: ['Wrapped Ether'] }),
  decimals: nullable<number>('integer', 'ERC-20 decimals; null when unknown.', 18),
  priceUsd: nullable<number>(
    'number',
    'USD price in the largest market (by supply) that holds the token, 8 significant digits; null when unknown.',
  ),
  priceSource: PriceSourceSchema,
  collateralMarkets: Type.Integer({ description: 'Markets that take it as collateral.' }),
  loanMarkets: Type.Integer({ description: 'Markets that lend it.' }),
  supplyUsd: UsdOrNull('Supplied over the markets that lend it', 'one of them'),
  borrowUsd: UsdOrNull('Borrowed over the markets that lend it', 'one of them'),
};

export const TokenSchema = Type.Object(TokenProperties, {
  additionalProperties: false,
  examples: [
    {
      chainId: 1,
      address: '0xc02aaa39b223fe8d0a0e5c4f27ead9083c756cc2',
      symbol: 'WETH',
      name: 'Wrapped Ether',
      decimals: 18,
      priceUsd: 3398.7,
      priceSource: {
        kind: 'feed',
        address: '0x5f4ec3df9cbd43714fe2740f5e3616155c5b8419',
        description: 'ETH / USD',
      },
      collateralMarkets: 84,
      loanMarkets: 145,
      supplyUsd: 6754352740.57,
      borrowUsd: 3701120326.91,
    },
  ],
});

export const TokenDetailSchema = Type.Object(
  {
    ...TokenProperties,
    feeds: Type.Array(FeedStatusSchema, {
      description: 'Feeds on its chain that price it (USD-quoted first).',
    }),
    markets: Type.Array(
      Type.Object(
        {
          uniqueKey: Type.String(),
          protocol: ProtocolSchema,
          role: Type.Unsafe<'collateral' | 'loan'>({ type: 'string', enum: ['collateral', 'loan'] }),
          supply: UsdOrNull('Market supply', 'the market'),
          borrow: UsdOrNull('Market borrow', 'the market'),
        },
        { additionalProperties: false },
      ),
      { description: 'Every market holding it, largest supply first (those without one last).' },
    ),
  },
  { additionalProperties: false },
);

export const TokenRef = ref('Token', TokenSchema);
export const TokenDetailRef = ref('TokenDetail', TokenDetailSchema);
