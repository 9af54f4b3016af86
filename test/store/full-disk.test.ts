import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { closeSync, mkdirSync, openSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createService } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import { WRITES_CLEAR_AFTER_MS } from '../../src/store/write-health.ts';
import { ManualClock } from '../clock.ts';
import { embeddedSettings, QUIET, seedOneMarket, tempDir } from '../helpers.ts';
import { sleep } from '../redis-helpers.ts';

/**
 * The embedded store on a real full filesystem: a small tmpfs mounted for the test (root only;
 * skipped with the reason elsewhere). Serving goes on and counts are kept; what must write is
 * answered 503 with Retry-After; /health says the store is degraded; the real error is logged
 * once when writes start failing and once when they work again; a first start on a full
 * filesystem fails with one line.
 */

const run = promisify(execFile);
const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const mounts: string[] = [];

/** A fresh tmpfs of `size` (e.g. '2m') mounted on a new folder, or the reason it cannot be. */
async function mountTmpfs(size: string): Promise<{ dir: string } | { skip: string }> {
  const dir = tempDir('lrds-full-disk-');
  try {
    await run('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  } catch (err) {
    return { skip: `cannot mount a tmpfs here (needs root): ${(err as Error).message.split('\n')[0]}` };
  }
  mounts.push(dir);
  return { dir };
}

/** Fills the filesystem of `dir` to the last byte; returns the file that does it (delete it to free the space). */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (let size = chunk.length; size >= 1; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
        size = Math.floor(size / 2);
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

after(async () => {
  for (const dir of mounts) await run('umount', ['-l', dir]).catch(() => {});
});

describe('embedded store on a full filesystem', () => {
  let dir = '';
  let skip: string | null = null;
  before(async () => {
    const mounted = await mountTmpfs('4m');
    if ('skip' in mounted) skip = mounted.skip;
    else dir = mounted.dir;
  });

  test('behavior: serving goes on and counts are kept; a key creation is 503 with Retry-After; /health degraded; the error logged once, and its end', async (t) => {
    if (skip) return t.skip(skip);
    const dataDir = join(dir, 'data');
    mkdirSync(dataDir);
    const seeded = await openStore({ dataDir, databaseUrl: null });
    await seedOneMarket(seeded);
    await seeded.close();
    const lines: Record<string, unknown>[] = [];
    const stream = new Writable({
      write(chunk, _encoding, callback) {
        lines.push(JSON.parse(String(chunk)));
        callback();
      },
    });
    const clock = new ManualClock();
    const service = await createService(
      { ...embeddedSettings(dataDir), simulationTickMs: 0 },
      { clock, logger: { level: 'info', stream }, server: QUIET },
    );
    try {
      const account = await service.keys.ensureAccount('acme');
      const { key } = await service.keys.create({ accountId: account.id, tier: 'enterprise', mode: 'live' });
      const auth = { authorization: `Bearer ${key}` };
      const get = (url: string) => service.app.inject({ url: `/api/v1${url}`, headers: auth });
      assert.equal((await get('/markets')).statusCode, 200);
      // The WAL emptied (as after a restart), so that every write needs room on the disk; then no room.
      const other = new DatabaseSync(join(dataDir, 'lrds.db'));
      other.exec('PRAGMA wal_checkpoint(TRUNCATE)');
      other.close();
      const filler = fill(dir);

      const served = 5;
      for (let i = 0; i < served; i++) assert.equal((await get('/markets')).statusCode, 200);
      const created = await service.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: auth,
        payload: { name: 'second' },
      });
      assert.equal(created.statusCode, 503, created.body);
      assert.equal(created.json().error, 'SERVICE_UNAVAILABLE');
      assert.ok(Number(created.headers['retry-after']) >= 1, String(created.headers['retry-after']));
      const health = (await service.app.inject({ url: '/api/v1/health' })).json();
      assert.equal(health.status, 'degraded');
      assert.equal(health.store.state, 'degraded');
      assert.match(health.store.writeError, /database or disk is full/);
      assert.equal(health.store.writesFailingSince, new Date(clock.now()).toISOString());
      // Still degraded while small writes may slip through, however often it is asked.
      for (let i = 0; i < 3; i++) await get('/markets');
      await sleep(1100); // a retry of the counts' write (every second) fails again

      rmSync(filler);
      clock.advance(WRITES_CLEAR_AFTER_MS);
      const healthy = (await service.app.inject({ url: '/api/v1/health' })).json();
      assert.equal(healthy.store.state, 'up');
      assert.equal(healthy.store.writeError, undefined);
      // The counts kept in memory are written within a second or so: none was lost.
      const deadline = Date.now() + 5000;
      let used = 0;
      while (Date.now() < deadline) {
        used = (await get('/client/quota')).json().data.daily.used;
        if (used >= 1 + served + 3) break;
        await sleep(100);
      }
      assert.equal(used, 1 + served + 3);
      const again = await service.app.inject({
        method: 'POST',
        url: '/api/v1/client/api-keys',
        headers: auth,
        payload: { name: 'second' },
      });
      assert.equal(again.statusCode, 201, again.body);

      const text = lines.map((l) => JSON.stringify(l)).join('\n');
      assert.doesNotMatch(text, /cannot rollback/);
      const failing = lines.filter((l) => String(l.msg).startsWith('store writes failing'));
      assert.equal(failing.length, 1, text);
      assert.match(String(failing[0]!.error), /database or disk is full/);
      assert.equal(lines.filter((l) => l.msg === 'store writes work again').length, 1, text);
      assert.equal(lines.filter((l) => l.level === 50).length, 0, `errors logged: ${text}`);
    } finally {
      await service.close();
    }
  });

  test('error: a first start on a full filesystem fails with one line on stderr and exit 1', async (t) => {
    if (skip) return t.skip(skip);
    const full = await mountTmpfs('64k');
    if ('skip' in full) return t.skip(full.skip);
    const result = await run(process.execPath, [MAIN, 'serve'], {
      env: { ...process.env, DATA_DIR: full.dir, PORT: '0', HOST: '127.0.0.1', SANDBOX_HISTORY_DAYS: '0' },
    }).then(
      () => ({ code: 0, stderr: '' }),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(result.code, 1);
    const lines = result.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, result.stderr);
    assert.match(lines[0]!, /^lrds: the store cannot write to .*lrds\.db: database or disk is full/);
  });
});
