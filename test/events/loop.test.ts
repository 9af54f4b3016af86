import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { applyPrices } from '../../src/data/read-model.ts';
import { EventsLoop } from '../../src/events/loop.ts';
import { SecretBox } from '../../src/events/secrets.ts';
import { verifySignature } from '../../src/events/signature.ts';
import { eventViews } from '../../src/queries/event-views.ts';
import { processHolder } from '../../src/store/lease-holder.ts';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.ts';
import { ManualClock } from '../clock.ts';
import { webhook } from '../contract/event-store-contract.ts';
import { liquidationOf, makeMarket, makePosition, modelOf, tempDir } from '../helpers.ts';

describe('EventsLoop', () => {
  test('behavior: a price move below a threshold becomes a stored event, delivered signed; liquidations too; one leader', async () => {
    const got: { headers: IncomingMessage['headers']; body: string }[] = [];
    const receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        got.push({ headers: req.headers, body });
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
    const store = new SqliteStore(join(tempDir('lrds-loop-'), 'lrds.db'));
    await store.migrate();
    try {
      const clock = new ManualClock();
      const market = makeMarket({ lltv: 0.86 });
      const p = makePosition(market, { collateralUsd: 12_000, borrowUsd: 8_000 }); // 1.29
      const model = modelOf([market], [p], clock);
      // As if loaded from the store: its liquidations are the store's.
      model.stored = true;
      const secrets = new SecretBox(randomBytes(32));
      const w = webhook({
        url,
        events: ['position.health_factor_below', 'position.liquidated'],
        filters: { wallets: [p.user], healthFactorBelow: 1.2 },
        sealedSecret: secrets.seal('whsec_loop'),
        createdAt: clock.now(),
      });
      await store.events.createSubscription(w, null);
      const options = {
        views: eventViews,
        store: store.events,
        history: store,
        models: { peek: (mode: 'live' | 'test') => (mode === 'live' ? model : null) },
        clock,
        secrets,
        allowPrivate: true,
      };
      const a = new EventsLoop({ ...options, holder: 'a' });
      const b = new EventsLoop({ ...options, holder: 'b' });
      assert.equal(await a.matchPass(), 0, 'the first pass observes');
      assert.equal(a.isLeader, true);
      applyPrices(model, [{ chainId: 1, token: market.collateralAddress, ratio: 0.9 }], clock.now());
      // The system clock reads fractions of a millisecond: the passes must take them.
      clock.advance(1000.375);
      assert.equal(await b.matchPass(), 0, 'not the leader: matches nothing');
      assert.equal(b.isLeader, false);
      assert.equal(await a.matchPass(), 1);
      assert.equal(await a.matchPass(), 0, 'nothing new');
      // A liquidation of the wallet, recorded in the store's history.
      await store.appendLiquidations([
        { ...liquidationOf(7, market, Math.floor(clock.now()) - 500, 5000), borrower: p.user },
      ]);
      clock.advance(1000);
      assert.equal(await a.matchPass(), 1);
      assert.equal(await a.matchPass(), 0, 'read again (the overlap): stored once');
      assert.equal(await b.deliverPass(), 2, 'any server delivers');
      await b.deliverer.idle();
      assert.deepEqual(got.map((g) => JSON.parse(g.body).type).sort(), [
        'position.health_factor_below',
        'position.liquidated',
      ]);
      for (const g of got)
        assert.equal(
          verifySignature(g.body, g.headers['lrds-signature'] as string, 'whsec_loop', clock.now() / 1000).ok,
          true,
        );
      await a.stop();
      // The lease released at stop: b takes over at once.
      assert.equal(await b.matchPass(), 0);
      assert.equal(b.isLeader, true);
      await b.stop();
      // A holder killed (of this host and PID namespace, its pid running nothing) holds it no more.
      const child = spawn(process.execPath, ['-e', '0']);
      await once(child, 'exit');
      const dead = processHolder().replace(`:${process.pid}:`, `:${child.pid}:`);
      assert.equal(await store.events.claimEventLease(dead, Math.floor(clock.now()), 15_000), true);
      const c = new EventsLoop({ ...options, holder: processHolder() });
      assert.equal(await c.matchPass(), 0);
      assert.equal(c.isLeader, true, 'taken at once');
      // One alive (another service of this process) is waited for.
      const d = new EventsLoop({ ...options, holder: processHolder() });
      assert.equal(await d.matchPass(), 0);
      assert.equal(d.isLeader, false);
      await c.stop();
      await d.stop();
    } finally {
      await store.close();
      await new Promise<void>((r) => receiver.close(() => r()));
    }
  });
});
