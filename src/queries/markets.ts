import type { ReadModel } from '../data/read-model.ts';
import { searchTerms } from '../data/search/vocabulary.ts';
import { QueryError } from './errors.ts';
import type { Found, Scope } from './types.ts';

/**
 * Market use cases: plain functions of the read model and already validated, clamped
 * parameters. Items are catalog ordinals; the caller renders them (the HTTP API from cached
 * JSON fragments).
 */

/**
 * Most distinct terms a search may have. Search costs a bounded amount per distinct term (the
 * work is linear in terms), and 8 is measured, not guessed: the longest name or label in the
 * catalog has 7 words, so any of them plus one more term fits, and 8 of the most common
 * one-letter terms, none of them cached yet, cost about 3 ms on the 20,000-market catalog of
 * the large profile (about 0.4 ms cached).
 */
export const MAX_SEARCH_TERMS = 8;
/** Longest search text, in characters after trimming. */
export const MAX_SEARCH_LENGTH = 100;

function found(model: ReadModel, ords: number[], scope: Scope, total?: number): Found<number> {
  const { catalog } = model;
  return {
    items: ords,
    itemProtocols: ords.map((o) => catalog.recordAt(o).protocol),
    scopeProtocols: ords.length > 0 ? [] : catalog.protocolsIn(scope),
    ...(total === undefined ? {} : { total }),
  };
}

/** Markets in scope by total supply (USD), largest first, from `offset`; total = markets in scope. */
export function listMarkets(model: ReadModel, p: Scope & { offset: number; limit: number }): Found<number> {
  const scope = { protocol: p.protocol, chainIds: p.chainIds };
  return found(model, model.catalog.list(scope, p.offset, p.limit), scope, model.catalog.count(scope));
}

/** Keyword search (every term must match; ranked: exact symbol, prefix, substring, then supply). */
export function searchMarkets(model: ReadModel, p: Scope & { text: string; limit: number }): Found<number> {
  const text = p.text.trim();
  if (text.length < 1 || text.length > MAX_SEARCH_LENGTH) {
    throw QueryError.invalid('query', `must be 1 to ${MAX_SEARCH_LENGTH} characters after trimming`);
  }
  const terms = searchTerms(text).length;
  if (terms > MAX_SEARCH_TERMS) {
    throw QueryError.invalid('query', `must have at most ${MAX_SEARCH_TERMS} distinct terms (has ${terms})`);
  }
  const scope = { protocol: p.protocol, chainIds: p.chainIds };
  return found(model, model.catalog.search(text, scope, p.limit), scope);
}

/** One market by its uniqueKey (lower-case); MARKET_NOT_FOUND when there is none. */
export function getMarket(model: ReadModel, key: string): Found<number> {
  const ord = model.catalog.ordOf(key);
  if (ord === undefined) throw QueryError.marketNotFound(key);
  const record = model.catalog.recordAt(ord);
  const protocol = [record.protocol];
  return { items: [ord], itemProtocols: protocol, scopeProtocols: protocol, chains: [record.chainId] };
}
