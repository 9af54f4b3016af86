/**
 * What the chain sources and the Morpho API agree on in their records: a Morpho market's key
 * (read on-chain or from the API, one market has one key), a vault's cap that is none, and how a
 * market without a USD price of a token is served: with what is known, its USD figures null and
 * no position.
 */

/** A market's uniqueKey (docs/decisions.md "Market identity") from its Morpho id. */
export function morphoKey(chainId: number, id: string): string {
  return `morpho-${chainId}-${id.toLowerCase()}`;
}

/** A MetaMorpho vault's supply cap of type(uint184).max: no cap (the chain's and the API's alike). */
export const NO_CAP = 2n ** 184n - 1n;

/** How a market without a USD price of its loan token, or of its collateral, is served (docs/decisions.md "Real sources"). */
export const UNPRICED_NOTE = {
  loan: 'served with its USD figures null and no position',
  collateral: 'served with its collateral price null and no position',
} as const;
