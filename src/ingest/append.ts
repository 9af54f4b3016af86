/**
 * Appends `items` to `into` one by one. `into.push(...items)` passes every item as an argument and
 * throws ("Maximum call stack size exceeded") past about 125,000 of them: a mainnet first sync's
 * logs, a chain's positions.
 */
export function append<T>(into: T[], items: Iterable<T>): T[] {
  for (const item of items) into.push(item);
  return into;
}
