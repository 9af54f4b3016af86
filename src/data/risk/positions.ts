import { evcOwnerPrefix } from '../../domain/accounts.ts';
import { ADDRESS_BYTES, addressAt, type PositionColumns } from '../../domain/position-columns.ts';
import type { Catalog } from '../catalog.ts';
import { grown } from '../typed-arrays.ts';

/**
 * The positions of a risk index: their columns (amounts as stated: in the USD of their market
 * record's prices, debt at the borrow index it was stated at), grown by doubling when a change
 * adds positions past their room, and the lists of them by market, by wallet and by Euler owner
 * group, each built on first use and then kept up to date.
 */
export class Positions {
  /** The positions; replaced by a larger copy when a change adds positions past its room. */
  cols: PositionColumns;
  /** The change sequence number of each position changed since the load (0 for the others). */
  readonly seqs = new Map<number, number>();
  /** Per market (by ord): every position number, debt-free ones too; built on the first change. */
  private members: Map<number, number[]> | null = null;
  /** Per wallet (lower-case address): its position numbers, every market; built on the first wallet query. */
  private byUser: Map<string, number[]> | null = null;
  /** Per Euler owner group (first 19 bytes): its Euler positions; built with byUser. */
  private byOwner: Map<string, number[]> | null = null;
  private readonly catalog: Catalog;

  constructor(catalog: Catalog, cols: PositionColumns) {
    this.catalog = catalog;
    this.cols = cols;
  }

  /** Whether position i can be at risk: it has debt and a finite health factor (docs/decisions.md "Positions at risk"). */
  isIndexed(i: number): boolean {
    return this.cols.borrowUsd[i]! > 0 && Number.isFinite(this.cols.healthFactor[i]!);
  }

  /** The position of market ord held by user `key` (its 20 bytes), -1 when there is none. */
  find(ord: number, key: Uint8Array): number {
    return (
      this.membersByMarket()
        .get(ord)
        ?.find((j) => this.userIs(j, key)) ?? -1
    );
  }

  /** Positions held in market ord, debt-free ones included. */
  countIn(ord: number): number {
    return this.membersByMarket().get(ord)?.length ?? 0;
  }

  private userIs(i: number, key: Uint8Array): boolean {
    const u = this.cols.users;
    const at = i * ADDRESS_BYTES;
    for (let b = 0; b < ADDRESS_BYTES; b++) if (u[at + b] !== key[b]) return false;
    return true;
  }

  /** Whether positions i and j have the same owner. */
  sameUser(i: number, j: number): boolean {
    const u = this.cols.users;
    const x = i * ADDRESS_BYTES;
    const y = j * ADDRESS_BYTES;
    for (let b = 0; b < ADDRESS_BYTES; b++) if (u[x + b] !== u[y + b]) return false;
    return true;
  }

  private membersByMarket(): Map<number, number[]> {
    if (!this.members) {
      this.members = new Map();
      const mi = this.cols.marketIndex;
      for (let i = 0; i < this.cols.count; i++) {
        const l = this.members.get(mi[i]!);
        if (l) l.push(i);
        else this.members.set(mi[i]!, [i]);
      }
    }
    return this.members;
  }

  /**
   * A new position of market ord, user `key`, with no amounts yet, listed in its market and
   * wallet: the columns grow by doubling when full.
   */
  add(ord: number, key: Uint8Array): number {
    const members = this.membersByMarket();
    const c = this.cols;
    const i = c.count;
    if (i >= c.marketIndex.length) {
      const cap = Math.max(16, c.marketIndex.length * 2);
      this.cols = {
        count: i,
        marketIndex: grown(c.marketIndex, cap),
        users: grown(c.users, cap * ADDRESS_BYTES),
        collateralUsd: grown(c.collateralUsd, cap),
        borrowUsd: grown(c.borrowUsd, cap),
        supplyUsd: grown(c.supplyUsd, cap),
        healthFactor: grown(c.healthFactor, cap),
      };
    }
    const n = this.cols;
    n.count = i + 1;
    n.marketIndex[i] = ord;
    n.users.set(key, i * ADDRESS_BYTES);
    if (this.byUser) {
      const user = addressAt(n.users, i);
      const list = this.byUser.get(user);
      if (list) list.push(i);
      else this.byUser.set(user, [i]);
      this.noteOwner(i, user);
    }
    const list = members.get(ord);
    if (list) list.push(i);
    else members.set(ord, [i]);
    return i;
  }

  /**
   * A wallet's positions (numbers), in every market, debt-free and emptied ones too. The index
   * by wallet is built on the first call (one pass over the positions) and then kept up to date.
   */
  ofWallet(address: string): readonly number[] {
    if (!this.byUser) {
      const byUser = new Map<string, number[]>();
      this.byOwner = new Map();
      const c = this.cols;
      for (let i = 0; i < c.count; i++) {
        const user = addressAt(c.users, i);
        const list = byUser.get(user);
        if (list) list.push(i);
        else byUser.set(user, [i]);
        this.noteOwner(i, user);
      }
      this.byUser = byUser;
    }
    const a = address.toLowerCase();
    const own = this.byUser.get(a) ?? [];
    // Euler: the positions of the address's EVC sub-accounts (the addresses sharing its first
    // 19 bytes) are its own too; each still names its sub-account.
    const group = this.byOwner!.get(evcOwnerPrefix(a));
    if (!group) return own;
    const linked = group.filter((i) => !this.userIsAddress(i, a));
    return linked.length === 0 ? own : [...own, ...linked];
  }

  /** Files an Euler position under its owner group. */
  private noteOwner(i: number, user: string): void {
    if (!this.byOwner || this.catalog.recordAt(this.cols.marketIndex[i]!).protocol !== 'euler') return;
    const k = evcOwnerPrefix(user);
    const l = this.byOwner.get(k);
    if (l) l.push(i);
    else this.byOwner.set(k, [i]);
  }

  private userIsAddress(i: number, address: string): boolean {
    return addressAt(this.cols.users, i) === address;
  }

  /** Bytes held by the columns. */
  byteSize(): number {
    const c = this.cols;
    return (
      c.marketIndex.byteLength +
      c.collateralUsd.byteLength +
      c.borrowUsd.byteLength +
      c.supplyUsd.byteLength +
      c.healthFactor.byteLength +
      c.users.byteLength
    );
  }
}
