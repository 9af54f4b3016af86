/**
 * The accounts a chain reader has read, kept between passes in one process: per group (a Morpho
 * market id, a comet address) and account, the state as last read, or null when the account held
 * nothing there.
 *
 * An account that held nothing is kept only as long as a reorganization could undo what emptied
 * it (its read block is newer than the oldest block the checkpoint can still find as a common
 * ancestor): a reorganization re-reads every account kept, and one deeper than that reads the
 * chain from the start. After that it is forgotten, so what a process keeps grows with the
 * positions that exist, not with every account the logs ever named. A forgotten account is read
 * again when a log names it.
 */
import { firstLine } from './rpc.ts';

export class AccountReads<T> {
  private readonly groups = new Map<string, Map<string, T | null>>();
  /** `${group}:${user}` of the accounts that held nothing → the block they were read at. */
  private readonly emptyAt = new Map<string, number>();
  /** Per group, the accounts whose state `marks` selects (kept as they are read). */
  private readonly marked = new Map<string, Set<string>>();

  /**
   * `marks`: which states to keep listed per group (`markedIn`), so that a pass can visit them
   * without walking every account kept.
   */
  private readonly marks: (state: T) => boolean;

  constructor(marks: (state: T) => boolean = () => false) {
    this.marks = marks;
  }

  /** The state of `user` in `group` as last read; null when it held nothing; undefined when not read. */
  get(group: string, user: string): T | null | undefined {
    return this.groups.get(group)?.get(user);
  }

  has(group: string, user: string): boolean {
    return this.groups.get(group)?.has(user) ?? false;
  }

  /** Records a read at `block`: the account's state, or null when it held nothing. */
  set(group: string, user: string, state: T | null, block: number): void {
    const users = this.groups.get(group) ?? new Map<string, T | null>();
    this.groups.set(group, users);
    users.set(user, state);
    if (state === null) this.emptyAt.set(`${group}:${user}`, block);
    else this.emptyAt.delete(`${group}:${user}`);
    if (state !== null && this.marks(state)) {
      const marked = this.marked.get(group) ?? new Set<string>();
      this.marked.set(group, marked.add(user));
    } else this.unmark(group, user);
  }

  /** The accounts of `group` whose state the constructor's `marks` selects. */
  markedIn(group: string): ReadonlySet<string> {
    return this.marked.get(group) ?? NONE;
  }

  private unmark(group: string, user: string): void {
    const marked = this.marked.get(group);
    if (marked?.delete(user) && marked.size === 0) this.marked.delete(group);
  }

  /** The accounts read in `group` (each read once per pass: walks one group, not every account). */
  of(group: string): ReadonlyMap<string, T | null> {
    return this.groups.get(group) ?? EMPTY;
  }

  /** The groups with accounts kept. */
  groupKeys(): IterableIterator<string> {
    return this.groups.keys();
  }

  /** How many accounts are kept. */
  get size(): number {
    let n = 0;
    for (const users of this.groups.values()) n += users.size;
    return n;
  }

  /** Every account read, as `${group}:${user}`. */
  *keys(): IterableIterator<string> {
    for (const [group, users] of this.groups) for (const user of users.keys()) yield `${group}:${user}`;
  }

  /** Forgets one account, so that it is read again. */
  delete(group: string, user: string): void {
    const users = this.groups.get(group);
    users?.delete(user);
    this.emptyAt.delete(`${group}:${user}`);
    this.unmark(group, user);
    if (users?.size === 0) this.groups.delete(group);
  }

  /** Forgets a group's accounts that `which` selects (all by default), so that they are read again. */
  forget(group: string, which: (state: T | null) => boolean = () => true): void {
    const users = this.groups.get(group);
    if (!users) return;
    for (const [user, state] of users)
      if (which(state)) {
        users.delete(user);
        this.emptyAt.delete(`${group}:${user}`);
        this.unmark(group, user);
      }
    if (users.size === 0) this.groups.delete(group);
  }

  /**
   * Forgets the accounts that held nothing when read at or before `block` (the oldest block a
   * reorganization can still be rolled back to): no reorganization this process follows undoes them.
   */
  settle(block: number): void {
    for (const [key, at] of this.emptyAt) {
      if (at > block) continue;
      this.emptyAt.delete(key);
      const split = key.lastIndexOf(':');
      const group = key.slice(0, split);
      const users = this.groups.get(group);
      users?.delete(key.slice(split + 1));
      if (users?.size === 0) this.groups.delete(group);
    }
  }

  clear(): void {
    this.groups.clear();
    this.emptyAt.clear();
    this.marked.clear();
  }
}

const EMPTY: ReadonlyMap<string, never> = new Map<string, never>();
const NONE: ReadonlySet<string> = new Set<string>();

/** The group of an account's key `${group}:${user}`: its text before the first ':'. */
export function groupOf(key: string): string {
  const end = key.indexOf(':');
  return end < 0 ? key : key.slice(0, end);
}

/**
 * Whether an account's calls were all answered. One refused leaves the account as last read
 * (its key into `retry`, read again next pass) and names it in `failures`; answered, it leaves
 * `retry`.
 */
export function accountAnswered(
  key: string,
  results: readonly { status: 'success' | 'failure'; error?: Error | undefined }[],
  retry: Set<string>,
  failures: { id: string; error: string }[],
): boolean {
  const bad = results.find((x) => x.status !== 'success');
  if (bad) {
    retry.add(key);
    failures.push({ id: key, error: `account ${key}: ${firstLine(bad.error)}` });
    return false;
  }
  retry.delete(key);
  return true;
}
