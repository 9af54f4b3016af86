import swagger from '@fastify/swagger';
import scalar from '@scalar/fastify-api-reference';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import type { TSchema } from 'typebox';
import { ERROR_STATUS } from '../errors.ts';
import { finishDocument, withExamples, withNdjsonLines } from '../openapi-document.ts';
import { inlineHashes } from '../pages/csp.ts';
import { dashboardPage } from '../pages/dashboard.ts';
import { IMMUTABLE, installedVersion, ServedBytes } from '../pages/static-asset.ts';
import type { Area } from '../routes/types.ts';
import { SHARED_SCHEMAS } from '../schemas.ts';

export const API_PREFIX = '/api/v1';
export const API_VERSION = '1.0.0';

/** The docs page and Scalar's script (4.3 MB), served by its plugin, and the version the script's URL names. */
const DOCS_PAGE = '/docs/';
const SCALAR_SCRIPT = '/docs/js/scalar.js';
const SCALAR_VERSION = installedVersion('@scalar/fastify-api-reference');

/**
 * The docs page's policy: scripts from this origin and the page's own inline one (by hash), no
 * eval; styles inline too (Scalar sets style attributes, which no hash can allow); every
 * request to this origin only.
 */
function docsCsp(scriptSources: string[]): string {
  return [
    "default-src 'self'",
    ["script-src 'self'", ...scriptSources].join(' '),
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** An icon inline, so that the browser asks no /favicon.ico. */
const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 16 16'%3E%3Crect width='16' height='16' rx='3' fill='%232a5bd7'/%3E%3C/svg%3E";

/** The first section of the document's description: the docs page shows it first. */
const GETTING_STARTED = `## Getting started

**1. Make a key.** Where the service runs:

\`\`\`sh
KEY=$(npx lrds keys create --tier pro)
\`\`\`

The key is printed once, alone on stdout; only its hash is stored. Send it only in the \`Authorization\` header,
never in a URL. A key holder makes and revokes the account's other keys on the [quota dashboard](/dashboard) or with
\`POST /client/api-keys\` and \`DELETE /client/api-keys/{keyId}\`.

**2. Make the first call** (here on a local \`npm start\`):

\`\`\`sh
curl -s -H "Authorization: Bearer $KEY" \\
  'http://localhost:8080/api/v1/markets/search?query=wstETH/WETH&limit=3'
\`\`\`

On this page, paste the key under **Authentication** (bearerAuth is selected) and send any operation with
**Test Request**.

**3. Watch your limits.** A key's tier sets a per-second rate limit, a daily and a monthly quota of counted
requests, and a result cap. The \`/client\` routes are rate limited but never counted. Every answer past
authentication says where you stand:

| header | what it says |
|---|---|
| \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\`, \`X-RateLimit-Reset\` | the per-second window: its size, what is left, the Unix ms when it frees |
| \`RateLimit-Policy\` | every policy that applies, e.g. \`"per-second";q=20;w=1, "daily";q=10000;w=86400, "monthly";q=300000;w=2592000\` |
| \`RateLimit\` | the policy closest to exhaustion, e.g. \`"daily";r=9000;t=43200\` (left, seconds to its reset) |
| \`Retry-After\` | on a 429, the seconds to wait |

A refusal is 429 \`RATE_LIMIT_EXCEEDED\`, \`DAILY_QUOTA_EXCEEDED\` (the day resets at 00:00 UTC) or
\`MONTHLY_QUOTA_EXCEEDED\` (the month resets on the 1st at 00:00 UTC). Besides each key's own quotas, the keys of one
tier in an account share a bound: the tier's quota times the keys the account may hold at once (\`maxKeysPerAccount\`
live keys and as many test keys), revoked keys' use included; a refusal by that bound has the same code, and its
message, \`limit\` and \`used\` are the account's. \`GET /client/quota\`, \`GET /client/usage\` and
the [quota dashboard](/dashboard) show usage, what is left and when it resets.`;

/** The served OpenAPI document: built the first time it is needed, then the same bytes. */
export class ServedDocument {
  #bytes: ServedBytes | null = null;
  /** How many times the document was built (once per process). */
  builds = 0;

  readonly #build: () => string;

  constructor(build: () => string) {
    this.#build = build;
  }

  get(): ServedBytes {
    if (this.#bytes === null) {
      this.#bytes = new ServedBytes(this.#build());
      this.builds++;
    }
    return this.#bytes;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    /** GET /api/v1/openapi.json's bytes. */
    openapiDocument: ServedDocument;
  }
}

/**
 * The document's tags, each named once, in the order of the areas, and the schemas it names in
 * components.schemas: the areas' own and the shared ones (registered once, referenced by the
 * routes, so that generated clients get named types; the serializers compile the schemas
 * themselves, not the references).
 */
function fromAreas(areas: readonly Area[]) {
  const tags = [...new Map(areas.map((area) => [area.tag.name, area.tag])).values()];
  const schemas: Record<string, TSchema> = {};
  for (const named of [...areas.map((area) => area.schemas ?? {}), SHARED_SCHEMAS])
    for (const [name, schema] of Object.entries(named)) {
      if (name in schemas) throw new Error(`two schemas are named ${name}`);
      schemas[name] = schema;
    }
  return { tags, schemas };
}

/**
 * The OpenAPI 3.1 document, built from the routes' own schemas (served at
 * /api/v1/openapi.json), with the tags and the named schemas of the areas, and the pages for
 * people: /docs renders the document, /dashboard shows a key holder's quota and keys
 * (src/http/pages). Neither page needs a key.
 */
export const openapiPlugin = fp<{ areas: readonly Area[] }>(
  async (app: FastifyInstance, options) => {
    const { tags, schemas } = fromAreas(options.areas);
    for (const [name, schema] of Object.entries(schemas))
      app.addSchema({ ...schema, $id: name, title: name });
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
          // SPDX's form for a license outside its list.
          license: {
            name: 'Proprietary: use under the terms of your API plan',
            identifier: 'LicenseRef-Proprietary',
          },
          contact: { name: 'API support', email: 'support@lrds.example' },
          description:
            'Read-only risk data for decentralized lending: markets of Morpho, Aave, Spark, Compound, Euler and Fluid ' +
            'on many EVM chains, their oracles and oracle freshness, and positions close to liquidation. ' +
            'Every success is `{ data, meta }`; every error is `{ error, message, ...details }`.\n\n' +
            GETTING_STARTED +
            '\n\n## Errors\n\n| error | status |\n|---|---|\n' +
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
        tags,
      },
      // The routes are registered under API_PREFIX; the document names them relative to it.
      transformObject: (documentObject) => {
        if (!('openapiObject' in documentObject)) return documentObject.swaggerObject;
        const { openapiObject } = documentObject;
        const paths: Record<string, unknown> = {};
        for (const [path, item] of Object.entries(openapiObject.paths ?? {})) {
          paths[(path.startsWith(API_PREFIX) ? path.slice(API_PREFIX.length) : path) || '/'] = item;
        }
        return finishDocument(
          withExamples(withNdjsonLines({ ...openapiObject, paths } as typeof openapiObject)),
        );
      },
    });
    // The document is the same for the life of the process (one version of the API): built,
    // serialized and compressed once, when the server is ready, and served as those bytes.
    const served = new ServedDocument(() => JSON.stringify(app.swagger()));
    app.decorate('openapiDocument', served);
    app.addHook('onReady', async () => {
      served.get().warm();
    });
    app.get(`${API_PREFIX}/openapi.json`, { schema: { hide: true } }, async (request, reply) => {
      reply.header('cache-control', 'no-cache');
      const body = await served.get().body(request, reply);
      return reply.type('application/json; charset=utf-8').send(body);
    });
    await app.register(async (docs) => {
      // The page and the script are the same for the life of the process (the plugin's
      // configuration is fixed): kept as bytes the first time they are rendered.
      let page: { html: string; csp: string; bytes: ServedBytes } | null = null;
      let script: { text: string; bytes: ServedBytes } | null = null;
      docs.addHook('onSend', async (request, reply, payload) => {
        if (
          request.routeOptions.url === DOCS_PAGE &&
          reply.statusCode === 200 &&
          typeof payload === 'string'
        ) {
          if (page?.html !== payload)
            page = {
              html: payload,
              csp: docsCsp(inlineHashes(payload, 'script')),
              bytes: new ServedBytes(payload),
            };
          reply.header('content-security-policy', page.csp);
          reply.header('cache-control', 'no-cache');
          // A 304 has no body: '' rather than null, which HEAD's own onSend cannot measure.
          return (await page.bytes.body(request, reply)) ?? '';
        }
        reply.header('content-security-policy', docsCsp([]));
        // An error (overload, shutdown) keeps its own headers and body.
        if (request.routeOptions.url !== SCALAR_SCRIPT || reply.statusCode !== 200) return payload;
        // At the URL the page names (with the package version) it never changes; at any
        // other (no or another version) the browser asks again.
        const versioned = (request.query as { v?: unknown }).v === SCALAR_VERSION;
        reply.header('cache-control', versioned ? IMMUTABLE : 'no-cache');
        if (typeof payload !== 'string') return payload;
        // The plugin sends the same string every time: compressed once per coding.
        if (script?.text !== payload) script = { text: payload, bytes: new ServedBytes(payload) };
        return (await script.bytes.body(request, reply)) ?? '';
      });
      await docs.register(scalar, {
        routePrefix: '/docs',
        configuration: {
          url: `${API_PREFIX}/openapi.json`,
          title: 'Lending Risk Data API',
          pageTitle: 'Lending Risk Data API',
          // Relative to /docs/; the version makes the URL change whenever the script does.
          cdn: `js/scalar.js?v=${SCALAR_VERSION}`,
          authentication: { preferredSecurityScheme: 'bearerAuth' },
          // Nothing that needs Scalar's hosted services, and no request to any other host.
          withDefaultFonts: false,
          telemetry: false,
          showDeveloperTools: 'never',
          hideClientButton: true,
          agent: { disabled: true },
          mcp: { disabled: true },
          documentDownloadType: 'json',
          defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
          favicon: FAVICON,
        },
      });
    });
    await app.register(dashboardPage);
  },
  { name: 'lrds-openapi' },
);
