import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { codingEtag } from '../serialize.ts';

/**
 * docs/decisions.md "Compression and caching": answers over 1 KB are compressed when the client accepts it, brotli or gzip
 * (its Accept-Encoding decides; brotli first on a tie), with `Vary: Accept-Encoding`. Levels are
 * chosen for CPU per request, not the last percent of size: brotli quality 4 and gzip level 6
 * shrink a 77 KB search answer to about a tenth in well under a millisecond.
 */
export const compressionPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(compress, {
      global: true,
      threshold: 1024,
      // JSON (and NDJSON, which the media database does not list), text and XML: streamed
      // answers are compressed as they are written.
      customTypes: /^text\/(?!event-stream)|(?:\+|\/)(?:x-nd)?json(?:;|$)|(?:\+|\/)(?:text|xml)(?:;|$)/,
      encodings: ['br', 'gzip'],
      brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
      zlibOptions: { level: 6 },
    });
    // After the compression hook of each route (registered after it, so it runs after it): a
    // compressed body gets the tag of its coding (serialize.ts codingEtag).
    app.addHook('onRoute', (route) => {
      const hooks =
        route.onSend === undefined ? [] : Array.isArray(route.onSend) ? route.onSend : [route.onSend];
      route.onSend = [...hooks, tagCoding];
    });
  },
  { name: 'lrds-compression' },
);

function tagCoding(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (err: null, p: unknown) => void,
) {
  const coding = reply.getHeader('content-encoding');
  const etag = reply.getHeader('etag');
  if (typeof coding === 'string' && coding !== 'identity' && typeof etag === 'string' && etag.endsWith('"'))
    reply.header('etag', codingEtag(etag, coding));
  done(null, payload);
}
