/**
 * A chain source's checkpoint (its cursor, kept by ingestion between passes): the last blocks
 * read, number and hash, to find a reorganization's common ancestor, and each protocol's part
 * (the configuration it was read with, what it found, the accounts it keeps for later), which
 * each protocol's pass declares, reads and writes itself. A cursor that cannot be read is an
 * empty one: every protocol is read from its start.
 */
import type { ItemReport, PreviousRun } from '../contract.ts';
import type { ChainRpc } from './rpc.ts';

/** Blocks (number and hash) of the last runs kept in the checkpoint, to find a reorganization's common ancestor. */
export const RECENT_BLOCKS = 64;

/**
 * Accounts kept in the checkpoint for markets not served (an unpriced market's borrowers), by
 * default (a chain source's `maxPending`).
 */
export const MAX_PENDING = 50_000;

/** A checkpoint as read: the recent blocks, and the protocols' parts as stored (each reads its own). */
export interface Checkpoint {
  recent: [number, string][];
  /** Every field of the stored cursor; none when there is none, or it cannot be read. */
  parts: Readonly<Record<string, unknown>>;
}

export function readCheckpoint(cursor: string | null): Checkpoint {
  const none: Checkpoint = { recent: [], parts: {} };
  if (!cursor) return none;
  try {
    const c = JSON.parse(cursor) as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null) return none;
    const recent = Array.isArray(c['recent'])
      ? c['recent'].filter(
          (r): r is [number, string] =>
            Array.isArray(r) && Number.isSafeInteger(r[0]) && typeof r[1] === 'string',
        )
      : [];
    return { recent, parts: c };
  } catch {
    return none;
  }
}

/** A checkpoint to store: the recent blocks, then each protocol's part in turn. */
export function writeCheckpoint(
  recent: readonly [number, string][],
  parts: readonly Record<string, unknown>[],
): string {
  return JSON.stringify(Object.assign({ recent }, ...parts));
}

/** The block numbers of a stored record, by key (those that are none left out). */
export function blocksByKey(x: unknown): Map<string, number> {
  const out = new Map<string, number>();
  if (typeof x === 'object' && x !== null && !Array.isArray(x))
    for (const [key, block] of Object.entries(x))
      if (Number.isSafeInteger(block) && block >= 0) out.set(key, block);
  return out;
}

/** The strings of a stored list (none when it is not a list). */
export function strings(x: unknown): string[] {
  return Array.isArray(x) ? x.filter((m) => typeof m === 'string') : [];
}

/**
 * Accounts kept in the checkpoint to be read when their market or vault is served, at most the
 * pass's `maxPending` (`what` they are; the item names how many more were left out).
 */
export function pending(
  pass: { items: ItemReport[]; maxPending: number },
  kind: string,
  what: string,
  keys: string[],
): string[] {
  if (keys.length > pass.maxPending)
    pass.items.push({
      id: `${kind}:pending`,
      ok: false,
      error: `${keys.length} ${what}: the first ${pass.maxPending} are kept for when they are`,
    });
  return keys.slice(0, pass.maxPending);
}

/**
 * The newest block read before that is still on the chain (its hash unchanged), among those
 * at or below the target block; null when none is. No request when the last block read is the
 * target or its parent, one otherwise.
 */
export async function canonicalAncestor(
  rpc: ChainRpc,
  recent: readonly [number, string][],
  target: { number: bigint; hash: string | null; parentHash: string },
): Promise<number | null> {
  const head = Number(target.number);
  for (const [n, hash] of recent.toReversed()) {
    if (n > head) continue;
    // The block just read, or its parent: known without asking the chain.
    if (n === head && target.hash === hash) return n;
    if (n === head - 1 && target.parentHash === hash) return n;
    const block = await rpc.client.getBlock({ blockNumber: BigInt(n) });
    if (block.hash === hash) return n;
  }
  return null;
}

/**
 * The accounts of the markets or pools (`<prefix><id>` or `<prefix><pool>_…`: Morpho markets,
 * comets, Euler vaults) that the last run served, and those it did not serve (`${id}:${user}`).
 */
export function knownHolders(
  prefix: string,
  previous: PreviousRun | undefined,
  pending: readonly string[] = [],
): { group: string; user: string }[] {
  const out = new Map<string, { group: string; user: string }>();
  const add = (p: { marketKey: string; user: string }) => {
    const [group = ''] = p.marketKey.slice(prefix.length).split('_');
    out.set(`${group}:${p.user}`, { group, user: p.user });
  };
  // Each of the prefix's markets' positions where they can be had so; else every position, filtered.
  if (previous?.positionsIn) {
    for (const m of previous.markets)
      if (m.uniqueKey.startsWith(prefix)) for (const p of previous.positionsIn(m.uniqueKey)) add(p);
  } else for (const p of previous?.positions ?? []) if (p.marketKey.startsWith(prefix)) add(p);
  for (const key of pending) {
    const [group, user] = key.split(':') as [string, string];
    out.set(key, { group, user });
  }
  return [...out.values()];
}

/** The identifiers of the markets the last run served under `prefix` (`<protocol>-<chainId>-`). */
export function knownMarkets(prefix: string, previous: PreviousRun | undefined): string[] {
  return (previous?.markets ?? []).flatMap((m) =>
    m.uniqueKey.startsWith(prefix) ? [m.uniqueKey.slice(prefix.length)] : [],
  );
}
