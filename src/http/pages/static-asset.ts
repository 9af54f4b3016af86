import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { noneMatch } from '../serialize.ts';

/** Static docs assets at a versioned URL never change: caches keep them for a year. */
export const IMMUTABLE = 'public, max-age=31536000, immutable';

export type Encoding = 'br' | 'gzip';

/**
 * The content coding to send, from the client's Accept-Encoding: brotli or gzip by their
 * q-values (`*` stands for any coding not named; q=0 refuses it), brotli on a tie as in
 * compression.ts; null when the client accepts neither.
 */
export function preferredEncoding(header: string | undefined): Encoding | null {
  if (!header) return null;
  const weights = new Map<string, number>();
  for (const part of header.split(',')) {
    const [name, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (!name) continue;
    let q = 1;
    for (const p of params) {
      const m = /^q=([0-9.]+)$/.exec(p);
      if (m) q = Number(m[1]);
    }
    weights.set(name, Number.isFinite(q) ? q : 0);
  }
  const weight = (coding: string) => weights.get(coding) ?? weights.get('*') ?? 0;
  const br = weight('br');
  const gz = weight('gzip');
  if (br <= 0 && gz <= 0) return null;
  return br >= gz ? 'br' : 'gzip';
}

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/**
 * A large static text (the docs page's 4.3 MB script), compressed once per coding, on libuv's
 * thread pool, the first time a client asks for that coding. Compressing it per request, as
 * @fastify/compress does for answers, would hold the event loop for 100-150 ms each time; once,
 * it can afford brotli quality 9 (about 1.05 MB, against 1.18 MB at quality 4).
 */
export class PrecompressedAsset {
  readonly source: Buffer;
  readonly #encoded = new Map<Encoding, Promise<Buffer>>();

  constructor(source: string | Buffer) {
    this.source = typeof source === 'string' ? Buffer.from(source) : source;
  }

  encoded(encoding: Encoding): Promise<Buffer> {
    let pending = this.#encoded.get(encoding);
    if (!pending) {
      pending =
        encoding === 'br'
          ? brotliAsync(this.source, {
              params: {
                [constants.BROTLI_PARAM_QUALITY]: 9,
                [constants.BROTLI_PARAM_SIZE_HINT]: this.source.length,
              },
            })
          : gzipAsync(this.source, { level: 9 });
      // A failure is not kept: the next request tries again.
      pending.catch(() => this.#encoded.delete(encoding));
      this.#encoded.set(encoding, pending);
    }
    return pending;
  }
}

/** The version of an installed package, read from its package.json (for versioned asset URLs). */
export function installedVersion(name: string): string {
  let dir = dirname(fileURLToPath(import.meta.resolve(name)));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === name && pkg.version) return pkg.version;
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`no package.json found for ${name}`);
    dir = parent;
  }
}

/**
 * Bytes built once and served as they are (the OpenAPI document, the docs page and its script):
 * a strong ETag of the bytes, each coding compressed once (PrecompressedAsset), and 304 Not
 * Modified for a client that holds them. Nothing is rebuilt or recompressed per request.
 */
export class ServedBytes {
  readonly etag: string;
  readonly asset: PrecompressedAsset;

  constructor(source: string | Buffer) {
    this.asset = new PrecompressedAsset(source);
    this.etag = `"${createHash('sha256').update(this.asset.source).digest('base64url').slice(0, 27)}"`;
  }

  /** Starts compressing every coding on the thread pool, so that no client waits for it. */
  warm(): void {
    for (const encoding of ['br', 'gzip'] as const) this.asset.encoded(encoding).catch(() => {});
  }

  /**
   * What to send for this request: `null` (a 304, the client holds the bytes: the reply's status
   * and ETag are set) or the body in the coding the client prefers (Content-Encoding set; the
   * compression hook then tags the ETag with the coding and compresses nothing again).
   */
  async body(request: FastifyRequest, reply: FastifyReply): Promise<Buffer | null> {
    reply.header('vary', 'Accept-Encoding');
    reply.header('etag', this.etag);
    const matched = noneMatch(request.headers['if-none-match'], this.etag);
    if (matched !== null) {
      reply.header('etag', matched).code(304);
      return null;
    }
    const encoding = preferredEncoding(request.headers['accept-encoding']);
    if (encoding === null) return this.asset.source;
    const body = await this.asset.encoded(encoding);
    reply.header('content-encoding', encoding);
    reply.header('content-length', body.length);
    return body;
  }
}
