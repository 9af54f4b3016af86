/**
 * Values the code around them guarantees are there (an index inside its array, a key just set in
 * its map, a row an insert returns, the answers of a multicall in the order its calls were made):
 * a bug otherwise, thrown as an internal error naming what was missing. They narrow the type where
 * `x!` would only assert it.
 */

/** `value`; an internal error naming `what` when it is null or undefined. */
export function must<T>(value: T | null | undefined, what: string): T {
  if (value === null || value === undefined) throw new Error(`internal error: ${what} is missing`);
  return value;
}

/** A tuple of `N` items of T (N a literal number). */
type Tuple<T, N extends number, Done extends T[] = []> = Done['length'] extends N
  ? Done
  : Tuple<T, N, [...Done, T]>;

const hasLength = <T, N extends number>(items: T[], n: N): items is Tuple<T, N> => items.length === n;

/**
 * The `n` items of `items` from `start` on, as a tuple to destructure; an internal error naming
 * `what` when fewer are there.
 */
export function mustSlice<T, N extends number>(
  items: readonly T[],
  start: number,
  n: N,
  what: string,
): Tuple<T, N> {
  const out = items.slice(start, start + n);
  if (!hasLength(out, n)) throw new Error(`internal error: ${what}: ${out.length} of ${n} from ${start}`);
  return out;
}
