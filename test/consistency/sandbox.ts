import assert from 'node:assert/strict';
import type { ReadModel } from '../../src/data/read-model.ts';
import { createService, type Service } from '../../src/service.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, QUIET, tempDir } from '../helpers.ts';

/**
 * The whole `default` sandbox as the service seeds it on a first start (an empty data folder,
 * the shipped tiers, no simulation ticks), with an Enterprise key of its data: what the
 * consistency suite checks the answers of against each other.
 */
export interface Sandbox {
  service: Service;
  clock: ManualClock;
  dataDir: string;
  key: string;
  /** The store's dataset as served to the key. */
  model: ReadModel;
  /** GET of the API that must answer 200, as JSON (the clock moves 15 ms a request). */
  get(url: string): Promise<{ data: unknown; meta: Record<string, unknown> }>;
  close(): Promise<void>;
}

export const START = '2026-11-22T12:00:00Z';

export async function openSandbox(
  dataDir = tempDir('lrds-consistency-'),
  clock = new ManualClock(START),
): Promise<Sandbox> {
  const service = await createService(embeddedSettings(dataDir), { clock, server: QUIET });
  const account = await service.keys.ensureAccount('consistency');
  const { key } = await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' });
  return {
    service,
    clock,
    dataDir,
    key,
    model: service.models.get('live'),
    async get(url) {
      // The clock stands still otherwise: 15 ms a request keeps the key under its rate.
      clock.advance(15);
      const res = await service.app.inject({
        url: `/api/v1${url}`,
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 300)}`);
      return res.json();
    },
    close: () => service.close(),
  };
}

/** Every item of a list, following meta.nextCursor; fails on a position served twice. */
export async function allPages<T>(
  sb: Sandbox,
  url: string,
  keyOf: (item: T) => string,
): Promise<{ items: T[]; totals: number[] }> {
  const items: T[] = [];
  const totals: number[] = [];
  const seen = new Set<string>();
  let cursor: string | undefined;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const page = await sb.get(`${url}${cursor ? `${sep}cursor=${cursor}` : ''}`);
    for (const item of page.data as T[]) {
      const k = keyOf(item);
      assert.ok(!seen.has(k), `${k} served twice`);
      seen.add(k);
      items.push(item);
    }
    totals.push(page.meta.total as number);
    cursor = page.meta.nextCursor as string | undefined;
  } while (cursor);
  return { items, totals };
}

/**
 * Whether a figure derived from served figures matches the served one: within `tolerance`,
 * the sum of half-units of the roundings involved. Returns a message when it does not.
 */
export function mismatch(what: string, served: number, derived: number, tolerance: number): string | null {
  return Math.abs(served - derived) <= tolerance + 1e-9 * Math.abs(derived)
    ? null
    : `${what}: served ${served}, derived ${derived} (tolerance ${tolerance})`;
}

/** Fails with the first few mismatches and how many there are. */
export function assertNone(problems: readonly (string | null)[], what: string): void {
  const found = problems.filter((p): p is string => p !== null);
  assert.equal(
    found.length,
    0,
    `${found.length} ${what} break the identity; the first:\n${found.slice(0, 5).join('\n')}`,
  );
}
