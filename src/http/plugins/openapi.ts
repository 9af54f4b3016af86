import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ERROR_STATUS } from '../errors.ts';
import { NAMED_SCHEMAS } from '../schemas.ts';

export const API_PREFIX = '/api/v1';
export const API_VERSION = '1.0.0';

/**
 * The OpenAPI 3.1 document, built from the routes' own schemas (served at
 * /api/v1/openapi.json), and the docs page at /docs that renders it.
 */
export const openapiPlugin = fp(
  async (app: FastifyInstance) => {
    // The shared schemas, named in components.schemas (see NAMED_SCHEMAS).
    for (const [name, schema] of Object.entries(NAMED_SCHEMAS))
      app.addSchema({ ...schema(), $id: name, title: name });
    await app.register(swagger, {
      refResolver: {
        // Named schemas keep their names; anything else gets a numbered one.
        buildLocalReference: (json, _baseUri, _fragment, i) =>
          typeof json.$id === 'string' ? json.$id : `def-${i}`,
      },
      openapi: {
        openapi: '3.1.0',
        info: {
          title: 'Lending Risk Data API',
          version: API_VERSION,
          license: { name: 'Proprietary: use under the terms of your API plan' },
          contact: { name: 'API support', email: 'support@lrds.example' },
          description:
            'Read-only risk data for decentralized lending: markets of Morpho, Aave, Spark, Compound, Euler and Fluid ' +
            'on many EVM chains, their oracles and oracle freshness, and positions close to liquidation. ' +
            'Every success is `{ data, meta }`; every error is `{ error, message, ...details }`.\n\n' +
            '| error | status |\n|---|---|\n' +
            Object.entries(ERROR_STATUS)
              .map(([code, status]) => `| \`${code}\` | ${status} |`)
              .join('\n'),
        },
        // Paths are relative to the API's prefix, so tools join them to the server URL right.
        servers: [{ url: API_PREFIX, description: 'This server' }],
        components: {
          securitySchemes: {
            bearerAuth: {
              type: 'http',
              scheme: 'bearer',
              description: 'API key: `lrds_live_…` or `lrds_test_…`.',
            },
          },
        },
        tags: [
          { name: 'Markets', description: 'Lending markets (core category).' },
          { name: 'Risk', description: 'Positions close to liquidation (risk category).' },
          {
            name: 'Client',
            description: 'Self-service: your account, keys, usage and quota. Not counted toward quotas.',
          },
          { name: 'Service', description: 'Health and the API description. No key needed.' },
        ],
      },
      // The routes are registered under API_PREFIX; the document names them relative to it.
      transformObject: (documentObject) => {
        if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
        const { openapiObject } = documentObject;
        const paths: Record<string, unknown> = {};
        for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
          paths[path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) || '/' : path] = item;
        }
        return { ...openapiObject, paths } as typeof openapiObject;
      },
    });
    app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async (_request, reply) =>
      reply.type('application/json').send(app.swagger()),
    );
    await app.register(async (docs) => {
      docs.addHook('onSend', async (_request, reply) => {
        reply.header(
          'content-security-policy',
          "default-src 'self'; script-src 'self' 'unsafe-inline' 'unsafe-eval'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; frame-ancestors 'none'",
        );
      });
      await docs.register(scalar, {
        routePrefix: '/docs',
        configuration: { url: `${API_PREFIX}/openapi.json`, title: 'Lending Risk Data API' },
      });
    });
  },
  { name: 'lrds-openapi' },
);
