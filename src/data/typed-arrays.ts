/** The typed arrays the read models grow in place (a market added, positions past their room). */
type Grown = Float64Array | Int32Array | Uint32Array | Uint8Array;

/** A copy of `a` of length `n` (at least its own), the new entries set to `fill`. */
export function grown<T extends Grown>(a: T, n: number, fill = 0): T {
  const b = new (a.constructor as new (n: number) => T)(Math.max(n, a.length));
  b.set(a);
  if (fill !== 0) b.fill(fill, a.length);
  return b;
}
