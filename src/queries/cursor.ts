import { QueryError } from './errors.ts';

/**
 * Opaque list cursors (docs/decisions.md "Lists, pages and streams"): the sort key of the last item of a page, with the list
 * it belongs to, as base64url JSON. The next page holds the items strictly after that key in
 * the list's order, so items added or changed meanwhile never shift a page (nothing skipped or
 * repeated, as with an offset). A cursor of another list, or not a cursor at all, is refused
 * as an invalid `cursor` parameter.
 */

type KeyPart = string | number;
type Shape = readonly ('string' | 'number')[];
type KeyOf<S extends Shape> = { [K in keyof S]: S[K] extends 'string' ? string : number };

export function encodeCursor(list: string, key: readonly KeyPart[]): string {
  return Buffer.from(JSON.stringify([list, ...key])).toString('base64url');
}

/**
 * The sort key carried by `raw`, checked against the shape of the list's key (`shape`: the
 * type of each part); undefined when no cursor was given.
 */
export function decodeCursor<const S extends Shape>(
  raw: string | undefined,
  list: string,
  shape: S,
): KeyOf<S> | undefined {
  if (raw === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const ok =
    Array.isArray(parsed) &&
    parsed.length === shape.length + 1 &&
    parsed[0] === list &&
    shape.every((type, i) => {
      const v = parsed[i + 1];
      return type === 'number' ? Number.isSafeInteger(v) : typeof v === 'string' && v.length <= 256;
    });
  if (!ok)
    throw QueryError.invalid(
      'cursor',
      'is not a cursor of this list: pass meta.nextCursor of a previous page',
    );
  return (parsed as unknown[]).slice(1) as KeyOf<S>;
}

/**
 * Keyset paging over entries in (chainId, address) order (`keyOf` gives an entry's key): the
 * entries `keep` keeps after the cursor, at most `limit`, their views, and the total kept.
 */
export function chainAddressPage<E, T>(
  list: string,
  entries: readonly E[],
  keep: (e: E) => boolean,
  cursor: string | undefined,
  limit: number,
  view: (e: E) => T,
  keyOf: (e: E) => { chainId: number; address: string },
): { items: T[]; entries: E[]; total: number; nextCursor?: string } {
  const after = decodeCursor(cursor, list, ['number', 'string']);
  const kept = entries.filter(keep);
  let start = 0;
  if (after) {
    const [chainId, address] = after;
    start = kept.findIndex((e) => {
      const k = keyOf(e);
      return k.chainId > chainId || (k.chainId === chainId && k.address > address);
    });
    if (start < 0) start = kept.length;
  }
  const slice = kept.slice(start, start + limit);
  const last = slice.at(-1);
  const lastKey = last === undefined ? undefined : keyOf(last);
  return {
    items: slice.map(view),
    entries: slice,
    total: kept.length,
    ...(lastKey && start + limit < kept.length
      ? { nextCursor: encodeCursor(list, [lastKey.chainId, lastKey.address]) }
      : {}),
  };
}
