import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import { freePort } from '../net-helpers.ts';

/** The `lrds` command as a user types it: help, version, usage mistakes, environment problems. */

const MAIN = new URL('../../src/cli/main.ts', import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), 'lrds-cli-'));
after(() => rmSync(dataDir, { recursive: true, force: true }));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** A sources file in `dir` whose one chain's RPC does not answer (a key in its path). */
function downSources(dir: string): string {
  const file = join(dir, 'down.json');
  writeFileSync(
    file,
    JSON.stringify({
      chains: [
        {
          chainId: 31337,
          rpcUrl: 'http://127.0.0.1:1/v2/abcdefghijklmnopqrstuvwxyz',
          morpho: { blue: `0x${'11'.repeat(20)}` },
        },
      ],
    }),
  );
  return file;
}

function lrds(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [MAIN, ...args],
      {
        env: { ...process.env, DATA_DIR: dataDir, LOG_LEVEL: 'silent', SANDBOX_HISTORY_DAYS: '0', ...env },
        timeout: 60_000,
      },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
  });
}

describe('lrds command line', () => {
  test('behavior: --help on every command and subcommand prints its usage and exits 0', async () => {
    const all = [
      ['--help'],
      ['serve', '--help'],
      ['seed', '--help'],
      ['keys', '--help'],
      ['keys', 'create', '--help'],
      ['keys', 'list', '-h'],
      ['keys', 'revoke', '--help'],
      ['keys', 'set-tier', '--help'],
      ['keys', 'move', '--help'],
      ['ingest', '--help'],
    ];
    const runs = all.map((args) => lrds(args));
    for (const [i, args] of all.entries()) {
      const r = await runs[i]!;
      assert.equal(r.code, 0, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stdout, /Usage/, args.join(' '));
      assert.equal(r.stderr, '');
    }
  });

  test('default: --version names the version, the API version and the runtime', async () => {
    const r = await lrds(['--version']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^lrds \d+\.\d+\.\d+ \(API 1\.0\.0, Node 24\.\d+\.\d+\)\n$/);
  });

  test('error: a usage mistake is one clear line (then the usage), exit 2, never a stack trace', async () => {
    const cases: [string[], RegExp][] = [
      [['keys', 'create', '--tier'], /^lrds: Option '--tier <value>' argument missing\n/],
      [['keys', 'create', '--tier', 'gold'], /^lrds: --tier must be one of free, pro, enterprise\n/],
      [['keys', 'create'], /^lrds: --tier must be one of/],
      [['keys', 'list', '--foo'], /^lrds: Unknown option '--foo'\n/],
      [['keys', 'revoke', 'a', 'b'], /^lrds: unexpected argument 'b'\n/],
      [['keys', 'set-tier', 'key_x', 'gold'], /^lrds: usage: lrds keys set-tier ID/],
      [['keys', 'frob'], /^lrds: unknown keys command 'frob'\n/],
      [['keys', 'move'], /^lrds: Usage: lrds keys move ID/],
      [['keys', 'move', 'key_x', '--account', ' '], /^lrds: --account must name an account\n/],
      [['seed', 'extra'], /^lrds: unexpected argument 'extra'\n/],
      [['seed', '--profile', 'huge'], /^lrds: --profile must be default or large/],
      [['serve', '--workers'], /^lrds: Option '--workers <value>' argument missing\n/],
      [['serve', '--workers', 'many'], /^lrds: --workers must be a positive integer/],
      [['frob'], /^lrds: unknown command 'frob'\n/],
    ];
    const runs = cases.map(([args]) => lrds(args));
    for (const [i, [args, expected]] of cases.entries()) {
      const r = await runs[i]!;
      assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code}`);
      assert.match(r.stderr, expected, args.join(' '));
      assert.doesNotMatch(r.stderr, /\n\s+at /, `${args.join(' ')}: a stack trace`);
    }
  });

  test('error: a port in use is one line and exit 1', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const { port } = blocker.address() as net.AddressInfo;
    try {
      const r = await lrds(['serve'], { PORT: String(port), HOST: '127.0.0.1' });
      assert.equal(r.code, 1);
      assert.match(r.stderr, new RegExp(`lrds: port ${port} is already in use on 127\\.0\\.0\\.1`));
      assert.doesNotMatch(r.stderr, /\n\s+at /);
    } finally {
      blocker.close();
    }
  });

  test('error: a key that does not exist and an unreachable PostgreSQL are one line and exit 1', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const cases: [string[], NodeJS.ProcessEnv, RegExp][] = [
      [['keys', 'revoke', 'key_doesnotexist'], {}, /^lrds: no key with id 'key_doesnotexist'\n$/],
      [['keys', 'set-tier', 'key_doesnotexist', 'pro'], {}, /^lrds: no key with id 'key_doesnotexist'\n$/],
      [
        ['keys', 'list'],
        { DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/test` },
        /^lrds: PostgreSQL unavailable: connect ECONNREFUSED 127\.0\.0\.1:\d+\n$/,
      ],
    ];
    for (const [args, env, expected] of cases) {
      const r = await lrds(args, env);
      assert.equal(r.code, 1, `${args.join(' ')}: exit ${r.code}`);
      assert.match(r.stderr, expected, args.join(' '));
    }
  });

  test('error: sources that cannot be used are one clear line: none set, an invalid file, a lease held elsewhere', async () => {
    const unset = await lrds(['ingest', '--once']);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /^lrds: SOURCES_FILE is not set/);
    const dir = mkdtempSync(join(tmpdir(), 'lrds-cli-sources-'));
    try {
      const bad = join(dir, 'bad.json');
      writeFileSync(
        bad,
        JSON.stringify({ chains: [{ chainId: 0, rpcUrl: 'ws://x' }], morphoApi: { url: 'https://api' } }),
      );
      const invalid = await lrds(['ingest', '--once'], { SOURCES_FILE: bad });
      assert.equal(invalid.code, 2);
      assert.match(invalid.stderr, /invalid sources file:\n/);
      assert.match(invalid.stderr, /\n {2}- morphoApi: must have required properties chainIds\n/);
      assert.match(invalid.stderr, /chains\[0\]\.chainId: must be >= 1/);
      // a server holds the store's ingestion lease: lrds ingest --once does not race it
      const leased = join(dir, 'leased');
      const store = await openStore({ dataDir: leased, databaseUrl: null });
      assert.equal(await store.claimIngestion('a-server', Date.now(), 600_000), true);
      await store.close();
      const standBy = await lrds(['ingest', '--once'], { SOURCES_FILE: downSources(dir), DATA_DIR: leased });
      assert.equal(standBy.code, 1);
      assert.match(standBy.stderr, /another process holds the ingestion lease of this store/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('behavior: serve whose sources cannot be read starts, warns in one line naming them, and /health says what is missing', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lrds-cli-down-'));
    const port = await freePort();
    const child = spawn(process.execPath, [MAIN, 'serve'], {
      env: {
        ...process.env,
        DATA_DIR: join(dir, 'data'),
        SOURCES_FILE: downSources(dir),
        PORT: String(port),
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        SANDBOX_HISTORY_DAYS: '0',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      let out = '';
      let err = '';
      child.stdout.setEncoding('utf8');
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk;
      });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no 'ready' in 60 s:\n${out}${err}`)), 60_000);
        child.once('exit', (code) => reject(new Error(`exited ${code}:\n${out}${err}`)));
        child.stdout.on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('"msg":"ready"')) {
            clearTimeout(timer);
            resolve();
          }
        });
      });
      const lines = out
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as { level: number; msg: string; sources?: string[] });
      const warnings = lines.filter((l) => l.level === 40);
      assert.equal(warnings.length, 1, out);
      assert.deepEqual(warnings[0]!.sources, ['chain:31337']);
      assert.match(warnings[0]!.msg, /^sources not read at start: chain:31337 \(HTTP request failed/);
      assert.ok(
        lines.findIndex((l) => l.level === 40) < lines.findIndex((l) => l.msg === 'ready'),
        'the warning comes before the ready line',
      );
      assert.doesNotMatch(out + err, /abcdefghijklmnopqrstuvwxyz/, 'the key is not printed');
      assert.doesNotMatch(out + err, /\n\s+at /, 'no stack trace');
      const health = (await (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).json()) as {
        status: string;
        sources: { id: string; lastRefresh: string | null; consecutiveFailures: number; lastError: string }[];
      };
      assert.equal(health.status, 'degraded');
      const source = health.sources.find((s) => s.id === 'chain:31337')!;
      assert.equal(source.lastRefresh, null);
      assert.equal(source.consecutiveFailures, 1);
      assert.match(source.lastError, /HTTP request failed/);
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('behavior: keys list is an aligned table, or JSON with --json', async () => {
    const created = await lrds([
      'keys',
      'create',
      '--tier',
      'pro',
      '--name',
      'risk bot',
      '--account',
      'fund-a',
    ]);
    assert.equal(created.code, 0, created.stderr);
    const key = created.stdout.trim();
    const table = await lrds(['keys', 'list', '--account', 'fund-a']);
    assert.equal(table.code, 0);
    const [header, row] = table.stdout.trimEnd().split('\n');
    assert.match(header!, /^ACCOUNT\s+ID\s+PREFIX\s+MODE\s+TIER\s+STATUS\s+CREATED\s+NAME$/);
    assert.match(row!, /^fund-a\s+key_/);
    assert.equal(header!.indexOf('PREFIX'), row!.indexOf(key.slice(0, 14)), 'columns aligned');
    assert.match(row!, /live\s+pro\s+active\s+\S+\s+risk bot$/);
    const json = await lrds(['keys', 'list', '--account', 'fund-a', '--json']);
    const list = JSON.parse(json.stdout);
    assert.equal(list.length, 1);
    assert.equal(list[0].prefix, key.slice(0, 14));
    assert.equal(list[0].name, 'risk bot');
    assert.equal(list[0].account, 'fund-a');
    assert.ok(!json.stdout.includes(key.slice(14)), 'never the whole key');
  });

  test('behavior: keys create without --account gives each key an account of its own; keys move regroups them', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lrds-cli-accounts-'));
    const env = { DATA_DIR: dir };
    try {
      const a = await lrds(['keys', 'create', '--tier', 'free'], env);
      const b = await lrds(['keys', 'create', '--tier', 'enterprise'], env);
      assert.equal(a.code, 0, a.stderr);
      assert.equal(b.code, 0, b.stderr);
      const list = async () =>
        JSON.parse((await lrds(['keys', 'list', '--json'], env)).stdout) as {
          id: string;
          account: string;
          accountId: string;
          prefix: string;
        }[];
      const [ka, kb] = await list();
      assert.equal(ka!.prefix, a.stdout.trim().slice(0, 14));
      assert.notEqual(ka!.accountId, kb!.accountId, 'two customers, two accounts');
      assert.equal(ka!.account, ka!.accountId, 'named after its id');
      assert.match(ka!.account, /^acct_[0-9A-Za-z]{20}$/);
      // one customer's keys are put together by naming the account
      const moved = await lrds(['keys', 'move', kb!.id, '--account', ka!.account], env);
      assert.equal(moved.code, 0, moved.stderr);
      assert.match(moved.stderr, new RegExp(`Key ${kb!.id} is now in account ${ka!.account}`));
      assert.equal((await list())[1]!.accountId, ka!.accountId);
      // and split again into an account of its own
      await lrds(['keys', 'move', kb!.id], env);
      const split = (await list())[1]!;
      assert.notEqual(split.accountId, ka!.accountId);
      assert.match(split.account, /^acct_/);
      const missing = await lrds(['keys', 'move', 'key_nope'], env);
      assert.equal(missing.code, 1);
      assert.match(missing.stderr, /^lrds: no key with id 'key_nope'\n/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test('behavior: serve warns once of an account default holding several live keys, with the command to split it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lrds-cli-default-'));
    const env = { DATA_DIR: dir };
    try {
      const startLog = async () => {
        const child = spawn(process.execPath, [MAIN, 'serve'], {
          env: {
            ...process.env,
            ...env,
            PORT: '0',
            HOST: '127.0.0.1',
            LOG_LEVEL: 'info',
            SANDBOX_HISTORY_DAYS: '0',
          },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.setEncoding('utf8');
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`no 'ready' in 60 s:\n${out}`)), 60_000);
          child.stdout.on('data', (chunk: string) => {
            out += chunk;
            if (out.includes('"msg":"ready"')) {
              clearTimeout(timer);
              resolve();
            }
          });
        });
        child.kill('SIGTERM');
        await new Promise((resolve) => child.once('exit', resolve));
        return out
          .split('\n')
          .filter((l) => l.startsWith('{'))
          .map((l) => JSON.parse(l) as { level: number; msg: string; account?: string; keys?: number });
      };
      // one customer's live and test key in `default`: nothing to warn of
      await lrds(['keys', 'create', '--tier', 'free', '--account', 'default'], env);
      await lrds(['keys', 'create', '--tier', 'free', '--test', '--account', 'default'], env);
      assert.deepEqual(
        (await startLog()).filter((l) => l.level === 40 && l.account === 'default'),
        [],
      );
      // a second live key: the store may hold several customers in one account
      await lrds(['keys', 'create', '--tier', 'pro', '--account', 'default'], env);
      const warnings = (await startLog()).filter((l) => l.level === 40 && l.account === 'default');
      assert.equal(warnings.length, 1);
      assert.equal(warnings[0]!.keys, 3);
      assert.match(warnings[0]!.msg, /account 'default' holds 3 active keys \(2 live, 1 test\)/);
      assert.match(warnings[0]!.msg, /'lrds keys move KEY_ID'/);
      assert.match(warnings[0]!.msg, /'lrds keys list --account default'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
