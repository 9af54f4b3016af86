import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { brotliCompress, constants, gzip } from 'node:zlib';

/** DECISIONS D19: static docs assets at a versioned URL are cached for a year. */
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
