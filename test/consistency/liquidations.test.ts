import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { LiquidationCursor, LiquidationEvent } from '../../src/domain/records/history.ts';
import { ManualClock } from '../clock.ts';
import { openSandbox, START } from './sandbox.ts';

/**
 * The liquidation history is the path's: a restart of the service on its store, at the same
 * instant, adds no liquidation (nothing crossed a price since), and one later adds only
 * liquidations stamped after the restart's last record, none before it.
 */

async function allLiquidations(sb: Awaited<ReturnType<typeof openSandbox>>): Promise<LiquidationEvent[]> {
  const out: LiquidationEvent[] = [];
  let after: LiquidationCursor | undefined;
  for (;;) {
    const page = await sb.service.store.liquidations({}, 5_000, after);
    out.push(...page);
    if (page.length < 5_000) return out;
    const last = page.at(-1)!;
    after = { at: last.at, chainId: last.chainId, txHash: last.txHash, logIndex: last.logIndex };
  }
}

describe('consistency: the liquidation history is the path', () => {
  test('a restart at the same instant adds no liquidation; a later one adds none before it', async () => {
    const first = await openSandbox();
    const before = await allLiquidations(first);
    const lastAt = before.reduce((m, l) => Math.max(m, l.at), 0);
    await first.close();

    const again = await openSandbox(first.dataDir, new ManualClock(START));
    try {
      const after = await allLiquidations(again);
      assert.equal(after.length, before.length, 'a restart at the same instant added liquidations');
    } finally {
      await again.close();
    }

    const later = new ManualClock(START);
    later.advance(3_600_000);
    const third = await openSandbox(first.dataDir, later);
    try {
      const after = await allLiquidations(third);
      const added = after.filter(
        (l) => !before.some((b) => b.txHash === l.txHash && b.logIndex === l.logIndex),
      );
      assert.deepEqual(
        added.filter((l) => l.at <= lastAt).map((l) => l.txHash),
        [],
        'liquidations added, stamped before the restart',
      );
      assert.ok(
        added.every((l) => l.at <= later.now()),
        'liquidations stamped after the instant of the restart',
      );
    } finally {
      await third.close();
    }
  });
});
