import { Type } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { API_PREFIX, API_VERSION } from '../../plugins/openapi.ts';
import { REQUEST_ID_HEADER } from '../../schemas.ts';
import type { Api } from '../types.ts';

/** Where things are, as paths on this server (a path, not a URL: the Host header is the client's to choose). */
const ROOT = {
  name: 'Lending Risk Data API',
  version: API_VERSION,
  apiUrl: API_PREFIX,
  documentationUrl: '/docs/',
  openapiUrl: `${API_PREFIX}/openapi.json`,
  healthUrl: `${API_PREFIX}/health`,
  dashboardUrl: '/dashboard',
  marketsUrl: `${API_PREFIX}/markets`,
  marketSearchUrl: `${API_PREFIX}/markets/search{?query}`,
  marketUrl: `${API_PREFIX}/markets/{marketId}`,
  positionsAtRiskUrl: `${API_PREFIX}/risk/positions-at-risk`,
  quotaUrl: `${API_PREFIX}/client/quota`,
} as const;

const path = (description: string) => Type.String({ description });

const RootSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String({ description: 'Version of the API (of this document).' }),
    apiUrl: path('The API: every other path is under it.'),
    documentationUrl: path('The documentation page, rendered from the OpenAPI document.'),
    openapiUrl: path('The OpenAPI 3.1 document.'),
    healthUrl: path('Health of the service (no key needed).'),
    dashboardUrl: path('The quota dashboard of a key holder.'),
    marketsUrl: path('Markets by supply.'),
    marketSearchUrl: path('Market search; `{?query}` stands for `?query=…`.'),
    marketUrl: path('One market; fill in `{marketId}`.'),
    positionsAtRiskUrl: path('Positions close to liquidation.'),
    quotaUrl: path("Your key's quota, use and limits."),
  },
  { additionalProperties: false },
);

const ROOT_BODY = JSON.stringify(ROOT);

const schema = {
  operationId: 'apiRoot',
  summary: 'Where things are',
  description:
    'The paths of the documentation, the OpenAPI document, health and the main resources, as paths on this server. ' +
    'No key needed; not counted. `GET /` answers the same.',
  security: [],
  response: {
    200: {
      ...RootSchema,
      description: 'Where things are.',
      headers: REQUEST_ID_HEADER,
      examples: [ROOT],
    },
  },
};

/** GET /api/v1 (documented) and GET / (the same answer): where things are, like GitHub's API root. */
export function registerRoot(v1: Api): void {
  v1.get('/', { schema }, async () => ROOT);
}

/** GET / of the server: the same answer as GET /api/v1. */
export function registerServerRoot(app: FastifyInstance): void {
  app.get('/', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/json; charset=utf-8').send(ROOT_BODY),
  );
}
