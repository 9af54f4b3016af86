/**
 * ERC-20 metadata of the tokens an adapter meets (anyone may deploy a token and a market for
 * it): the calls to add to a multicall, and what to keep of their answers.
 */
import { erc20Abi } from 'viem';

export interface TokenMeta {
  address: string;
  symbol: string;
  name: string;
  /** Null when the token does not answer `decimals()`: its market is not served (amounts unknown). */
  decimals: number | null;
}

/** Calls per token in `tokenCalls`. */
export const TOKEN_CALLS = 3;

/** `symbol`, `name` and `decimals` of each token, in that order (TOKEN_CALLS per token). */
export function tokenCalls(addresses: readonly `0x${string}`[]) {
  return addresses.flatMap((address) => [
    { address, abi: erc20Abi, functionName: 'symbol' } as const,
    { address, abi: erc20Abi, functionName: 'name' } as const,
    { address, abi: erc20Abi, functionName: 'decimals' } as const,
  ]);
}

/**
 * Keeps the tokens whose `tokenCalls` answered `decimals()` (a token that does not is asked again
 * next pass); `results` are those calls' results, from the first.
 */
export function keepTokens(
  addresses: readonly string[],
  results: readonly { status: 'success' | 'failure'; result?: unknown }[],
  into: Map<string, TokenMeta>,
): void {
  addresses.forEach((address, i) => {
    const [symbol, name, decimals] = results.slice(i * TOKEN_CALLS, (i + 1) * TOKEN_CALLS);
    const a = address.toLowerCase();
    const short = `${a.slice(0, 6)}…${a.slice(-4)}`;
    if (decimals?.status !== 'success') return;
    into.set(a, {
      address: a,
      symbol: (symbol?.status === 'success' ? tokenText(String(symbol.result), 32) : '') || short,
      name: (name?.status === 'success' ? tokenText(String(name.result), 64) : '') || short,
      // A token claiming more decimals than any real one would make its amounts meaningless.
      decimals: Math.min(Number(decimals.result), 36),
    });
  });
}

/**
 * A token's own text: whitespace collapsed, other control characters dropped, at most `max`
 * characters.
 */
export function tokenText(text: string, max: number): string {
  return text
    .replace(/\s+/g, ' ')
    .replace(/[\u0000-\u001f\u007f-\u009f]/g, '')
    .trim()
    .slice(0, max);
}
