import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { noneMatch } from '../serialize.ts';
import { inlineHashes } from './csp.ts';

/**
 * The quota dashboard of a key holder (GET /dashboard): one self-contained page, no key needed
 * to load it. It asks for the key, keeps it in the tab's sessionStorage, and calls the
 * /api/v1/client routes with it (rate limited, never counted toward quotas). The page itself
 * is outside the access pipeline, so it is neither rate limited nor counted.
 */
const PAGE = readFileSync(new URL('./dashboard.html', import.meta.url), 'utf8');

/** The page's inline `<script>` or `<style>` elements, by hash; it has both. */
function inline(tag: 'script' | 'style'): string {
  const hashes = inlineHashes(PAGE, tag);
  if (hashes.length === 0) throw new Error(`dashboard.html has no inline ${tag}`);
  return hashes.join(' ');
}

/** Its own inline script and style, requests to this origin only; no frames, forms or plugins. */
const CSP = [
  "default-src 'none'",
  `script-src ${inline('script')}`,
  `style-src ${inline('style')}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ETAG = `"${createHash('sha256').update(PAGE).digest('base64url').slice(0, 27)}"`;

export async function dashboardPage(app: FastifyInstance): Promise<void> {
  app.get('/dashboard', { schema: { hide: true } }, async (request, reply) => {
    reply.header('content-security-policy', CSP);
    reply.header('cache-control', 'no-cache');
    reply.header('etag', ETAG);
    const matched = noneMatch(request.headers['if-none-match'], ETAG);
    if (matched !== null) return reply.header('etag', matched).code(304).send();
    return reply.type('text/html; charset=utf-8').send(PAGE);
  });
}
