import assert from 'node:assert/strict';
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import postgres from 'postgres';
import { type Answer, freePort, getAnswer as get, tightestSpan } from '../net-helpers.ts';
import { PrivateRedis, redisServerSkipReason } from '../redis-helpers.ts';

/**
 * `lrds serve --workers 2` on PostgreSQL and a private redis-server, under load from several
 * keys over several connections (so both workers serve every key). The redis-server is killed
 * (SIGKILL) and, seconds later, restarted empty. Measured from the client side, as a customer
 * would: no answer is a 5xx; for every key, no rate + 1 admitted answers fall inside a span the
 * client can prove is under 1,000 ms (first sent to last answered), across the failover and the
 * recovery; a key never gets more than its daily quota; and the stored count equals the counted
 * answers the clients received.
 */

const ROOT = new URL('../../', import.meta.url).pathname;
const MAIN = join(ROOT, 'src/cli/main.ts');
const run = promisify(execFile);
const PG_URL = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const redisSkip = redisServerSkipReason();
const admin = postgres(PG_URL, { max: 2, connect_timeout: 3, onnotice: () => {} });
const pgReachable = await admin`SELECT 1`.then(
  () => true,
  () => false,
);
let skip: string | undefined = redisSkip;
if (!skip && !pgReachable) {
  if (process.env.CI === 'true') {
    test('error: PostgreSQL must be reachable in CI', () =>
      assert.fail(`PostgreSQL not reachable at ${PG_URL}`));
  }
  skip = 'PostgreSQL not reachable: skipped (CI runs it)';
}

const PRO_DAILY = 90;
const dir = mkdtempSync(join(tmpdir(), 'lrds-failover-'));
const tiersFile = join(dir, 'tiers.json');
const schema = `lrds_failover_${randomBytes(6).toString('hex')}`;
const children = new Set<ChildProcess>();
let redis: PrivateRedis | null = null;

after(async () => {
  for (const c of children) c.kill('SIGKILL');
  await redis?.stop();
  if (pgReachable) await admin.unsafe(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end({ timeout: 5 });
  rmSync(dir, { recursive: true, force: true });
});

function env(port: number, redisUrl: string): NodeJS.ProcessEnv {
  const url = new URL(PG_URL);
  url.searchParams.set('search_path', schema);
  return {
    ...process.env,
    DATABASE_URL: url.toString(),
    REDIS_URL: redisUrl,
    PORT: String(port),
    HOST: '127.0.0.1',
    TIERS_FILE: tiersFile,
    LOG_LEVEL: 'warn',
    SANDBOX_HISTORY_DAYS: '0',
    INSTANCES: '',
  };
}

describe('lrds serve --workers 2: redis-server killed and restarted empty under load', {
  skip: skip ?? false,
}, () => {
  test('behavior: never more than the rate in any 1,000 ms across both workers and both transitions, never more than the quota', async (t) => {
    const tiers = JSON.parse(readFileSync(join(ROOT, 'config/tiers.json'), 'utf8'));
    tiers.tiers.pro.dailyQuota = PRO_DAILY;
    writeFileSync(tiersFile, JSON.stringify(tiers));
    const rates = {
      free: tiers.tiers.free.ratePerSecond as number,
      pro: tiers.tiers.pro.ratePerSecond as number,
    };
    await admin.unsafe(`CREATE SCHEMA ${schema}`);
    redis = await PrivateRedis.start();

    const port = await freePort();
    const server = spawn(process.execPath, [MAIN, 'serve', '--workers', '2'], {
      env: env(port, redis.url),
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    children.add(server);
    let stderr = '';
    server.stderr!.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) =>
      server.on('exit', (code) => {
        children.delete(server);
        resolve(code);
      }),
    );
    const health = async () => {
      const res = await fetch(`http://127.0.0.1:${port}/api/v1/health`);
      return (await res.json()) as { limiter: { state: string } };
    };
    const deadline = performance.now() + 20_000;
    for (;;) {
      try {
        if ((await health()).limiter.state === 'up') break;
      } catch {
        // not listening yet
      }
      if (server.exitCode !== null) throw new Error(`server exited at start-up:\n${stderr}`);
      if (performance.now() > deadline) throw new Error(`server not ready after 20 s:\n${stderr}`);
      await sleep(100);
    }
    const createKey = async (tier: string) =>
      (
        await run(process.execPath, [MAIN, 'keys', 'create', '--tier', tier], { env: env(0, redis!.url) })
      ).stdout.trim();
    const [free1, free2, pro1, pro2] = await Promise.all([
      createKey('free'),
      createKey('free'),
      createKey('pro'),
      createKey('pro'),
    ]);
    const keys = { free1: free1!, free2: free2!, pro1: pro1!, pro2: pro2! };
    const answers = new Map<string, Answer[]>(Object.keys(keys).map((k) => [k, []]));
    let stop = false;
    // Two connections per key (node:cluster hands connections to the workers in turn), paced
    // unevenly so the workers see different shares of each key.
    const loop = async (name: keyof typeof keys, pauseMs: number) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      while (!stop) {
        answers.get(name)!.push(await get(agent, port, '/api/v1/markets?limit=1', keys[name]));
        await sleep(pauseMs);
      }
      agent.destroy();
    };
    const loops = [
      loop('free1', 4),
      loop('free1', 9),
      loop('free2', 6),
      loop('free2', 6),
      loop('pro1', 3),
      loop('pro1', 7),
    ];

    const t0 = performance.now();
    await sleep(2500);
    const killedAt = performance.now();
    await redis.kill();
    loops.push(loop('pro2', 3), loop('pro2', 7));
    let degraded = false;
    for (let i = 0; i < 8; i++) {
      await sleep(500);
      if ((await health()).limiter.state === 'down') degraded = true;
    }
    const restartedAt = performance.now();
    await redis.restart();
    await sleep(4000);
    stop = true;
    await Promise.all(loops);

    server.kill('SIGTERM');
    assert.equal(await exited, 0, stderr);
    const stored = await admin.unsafe(
      `SELECT k.key_id, SUM(k.requests)::int AS n FROM ${schema}.usage k GROUP BY k.key_id`,
    );
    const keyIds = await admin.unsafe(`SELECT id, prefix FROM ${schema}.api_keys`);
    const storedByPrefix = new Map<string, number>();
    for (const k of keyIds) {
      storedByPrefix.set(k.prefix as string, Number(stored.find((s) => s.key_id === k.id)?.n ?? 0));
    }

    const rel = (x: number) => (x - t0).toFixed(0);
    t.diagnostic(`killed at ${rel(killedAt)} ms, restarted at ${rel(restartedAt)} ms`);
    const problems: string[] = [];
    const check = (ok: boolean, what: string) => {
      if (!ok) problems.push(what);
    };
    check(degraded, '/health reported the limiter down during the outage');
    for (const [name, list] of answers) {
      const rate = name.startsWith('free') ? rates.free : rates.pro;
      const statuses = new Map<string, number>();
      for (const a of list) {
        const s = `${a.status}${a.error ? ` ${a.error}` : ''}`;
        statuses.set(s, (statuses.get(s) ?? 0) + 1);
      }
      const admitted = list.filter((a) => a.status === 200);
      const counted = list.filter(
        (a) => a.status === 200 || (a.status === 429 && a.error !== 'RATE_LIMIT_EXCEEDED'),
      );
      const span = tightestSpan(admitted, rate);
      const during = admitted.filter((a) => a.sent > killedAt && a.answered < restartedAt).length;
      t.diagnostic(
        `${name}: ${JSON.stringify(Object.fromEntries(statuses))}; admitted during the outage ${during}; tightest span of ${rate + 1} admitted ${span.toFixed(2)} ms`,
      );
      check(
        list.every((a) => a.status === 200 || a.status === 429),
        `${name}: answers other than 200 and 429: ${JSON.stringify(Object.fromEntries(statuses))}`,
      );
      check(span >= 1000, `${name}: ${rate + 1} admitted answers within ${span.toFixed(2)} ms`);
      if (name.startsWith('pro')) {
        check(admitted.length <= PRO_DAILY, `${name}: ${admitted.length} admitted, daily quota ${PRO_DAILY}`);
        check(
          list.some((a) => a.error === 'DAILY_QUOTA_EXCEEDED'),
          `${name}: the daily quota was not reached during the test`,
        );
      } else {
        check(during > 0, `${name}: nothing served during the outage`);
      }
      const storedCount = storedByPrefix.get(keys[name as keyof typeof keys].slice(0, 14));
      check(
        storedCount === counted.length,
        `${name}: stored count ${storedCount}, counted answers ${counted.length}`,
      );
    }
    assert.deepEqual(problems, []);
  });
});
