import { constants } from 'node:zlib';
import compress from '@fastify/compress';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';

/**
 * DECISIONS D19: answers over 1 KB are compressed when the client accepts it, brotli or gzip
 * (its Accept-Encoding decides; brotli first on a tie), with `Vary: Accept-Encoding`. Levels are
 * chosen for CPU per request, not the last percent of size: brotli quality 4 and gzip level 6
 * shrink a 77 KB search answer to about a tenth in well under a millisecond.
 */
export const compressionPlugin = fp(
  async (app: FastifyInstance) => {
    await app.register(compress, {
      global: true,
      threshold: 1024,
      encodings: ['br', 'gzip'],
      brotliOptions: { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } },
      zlibOptions: { level: 6 },
    });
  },
  { name: 'lrds-compression' },
);
