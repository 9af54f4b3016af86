import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { LrdsClient } from '../sdk/src/client.ts';
import { createTestApp, type TestApp } from './helpers.ts';

/**
 * The README and docs/ say only what is true: the endpoint table's limits are the routes', the SDK
 * list is the SDK's methods, the commands they name exist, their links lead somewhere, and they
 * cite no document outside the repository.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const read = (path: string) => readFileSync(join(ROOT, path), 'utf8');
const DOCS = readdirSync(join(ROOT, 'docs'))
  .filter((f) => f.endsWith('.md'))
  .map((f) => `docs/${f}`);
const PUBLIC_DOCS = ['README.md', 'bench/README.md', ...DOCS];

let t: TestApp;
let doc: any;

before(async () => {
  t = await createTestApp();
  doc = (await t.app.inject({ url: '/api/v1/openapi.json' })).json();
});
after(() => t.close());

/** The README's endpoint table: `METHOD /path` → the `limit` max column. */
function endpointTable(): Map<string, string> {
  const readme = read('README.md');
  const start = readme.indexOf('## API overview');
  const overview = readme.slice(start, readme.indexOf('\n## ', start + 1));
  const rows = new Map<string, string>();
  for (const [, method, path, max] of overview.matchAll(
    /^\| `(GET|POST|DELETE) (\/[^` ]*)`[^|]*\| [^|]* \| ([^|]+) \|/gm,
  )) {
    rows.set(`${method} ${path}`, (max ?? '').trim());
  }
  return rows;
}

describe('README and docs', () => {
  test('behavior: the endpoint table states each route’s limit maximum as the code does', () => {
    const rows = endpointTable();
    assert.ok(rows.size > 30, 'the endpoint table was found');
    for (const [path, ops] of Object.entries<Record<string, any>>(doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) {
        const key = `${method.toUpperCase()} ${path}`;
        const params = (op.parameters ?? []).map((p: any) =>
          p.$ref ? doc.components.parameters[String(p.$ref).split('/').pop() ?? ''] : p,
        );
        const limit = params.find((p: any) => p?.in === 'query' && p.name === 'limit');
        const stated = rows.get(key);
        assert.ok(stated !== undefined, `${key} is in the table`);
        if (!limit) {
          assert.equal(stated, '—', `${key} takes no limit`);
          continue;
        }
        const text = `${limit.description ?? ''} ${limit.schema?.description ?? ''}`;
        const m = /min\(([0-9_,]+)|at most ([0-9_,]+)/.exec(text);
        const max = m?.[1] ?? m?.[2];
        assert.ok(max, `${key}: the limit parameter states its maximum`);
        assert.equal(stated.replaceAll(',', ''), max.replaceAll(/[_,]/g, ''), `${key}: limit max`);
      }
    }
  });

  test('behavior: the SDK page names exactly the client’s methods', () => {
    const methods = Object.getOwnPropertyNames(LrdsClient.prototype)
      .filter((m) => m !== 'constructor')
      .sort();
    const sdk = read('docs/sdk.md');
    const named = new Set([...sdk.matchAll(/`([a-z][A-Za-z]+)(?:\([^`]*\))?`/g)].map(([, n]) => n as string));
    const missing = methods.filter((m) => !named.has(m));
    assert.deepEqual(missing, [], 'SDK methods the page does not name');
    // Every operation of the API has its method, named by its operationId.
    const operations = Object.values<Record<string, any>>(doc.paths)
      .flatMap((ops) => Object.values<any>(ops).map((op) => op.operationId as string))
      .filter((id) => id !== 'mcp' && id !== 'openapi');
    const lacking = operations.filter((id) => !methods.includes(id));
    assert.deepEqual(lacking, [], 'operations without an SDK method');
  });

  test('behavior: the lrds commands and npm scripts the README names exist', () => {
    const readme = read('README.md');
    const help = execFileSync(process.execPath, [join(ROOT, 'src/cli/main.ts'), '--help'], {
      encoding: 'utf8',
      env: { ...process.env, NO_COLOR: '1' },
    });
    const commands = new Set(
      [...help.matchAll(/^ {2}lrds ([a-z-]+(?: [a-z-]+)?)/gm)].map(([, c]) => (c ?? '').trim()),
    );
    for (const [, cmd] of readme.matchAll(/\|\s*`lrds ([a-z-]+(?: [a-z-]+)?)/g)) {
      const name = cmd ?? '';
      assert.ok(commands.has(name) || [...commands].some((c) => c.startsWith(`${name} `)), `lrds ${name}`);
    }
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    for (const file of PUBLIC_DOCS) {
      for (const [, script, prefix] of read(file).matchAll(/npm run ([a-z:-]+)( --prefix)?/g)) {
        if (prefix) continue; // the SDK's own scripts (--prefix sdk)
        assert.ok(scripts[script ?? ''], `${file}: npm run ${script}`);
      }
    }
  });

  test('behavior: lrds ingest --help names every kind of source the sources file takes', () => {
    const help = execFileSync(process.execPath, [join(ROOT, 'src/cli/main.ts'), 'ingest', '--help'], {
      encoding: 'utf8',
    });
    for (const name of [
      'Morpho Blue',
      'Aave',
      'Spark',
      'Compound',
      'Euler',
      'Fluid',
      'Chainlink',
      "Morpho's GraphQL API",
    ]) {
      assert.ok(help.includes(name), name);
    }
  });

  test('behavior: the repository paths the README and docs name exist', () => {
    const path = /(?<![\w/.-])((?:src|test|bench|docs|config|sdk)\/[\w./-]*[\w])/g;
    for (const file of PUBLIC_DOCS) {
      for (const [, named] of read(file).matchAll(path)) {
        // What the benchmark and the SDK build make when they run: bench/.data, dated results, sdk/dist.
        if (!named || named.includes('*') || /^(bench\/(results\/|\.data)|sdk\/dist)/.test(named)) continue;
        assert.ok(existsSync(join(ROOT, named)), `${file} names ${named}, which does not exist`);
      }
    }
  });

  test('behavior: relative links in the README and docs lead to files that exist', () => {
    for (const file of PUBLIC_DOCS) {
      for (const [, target] of read(file).matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
        if (!target || /^[a-z]+:/.test(target)) continue;
        assert.ok(existsSync(join(ROOT, dirname(file), target)), `${file}: ${target}`);
      }
    }
  });

  test('behavior: code comments cite only what the repository holds (no decision numbers, no outside spec)', () => {
    const cites = /\bDECISIONS\b|\bSPEC\.md\b|\bSPEC\b|(?<![\w.#-])D(?:[1-9]|1[0-9]|2[0-4])\b(?![-\w])/;
    const code = (dir: string): string[] =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter((f) => /\.(ts|lua|json|sql)$/.test(f))
        .map((f) => join(dir, f));
    // This file and the examples check hold the pattern itself.
    const self = new Set(['test/docs.test.ts', 'test/openapi-examples.test.ts']);
    for (const file of [
      ...code('src'),
      ...code('test'),
      ...code('bench').filter((f) => !f.includes('results')),
    ]) {
      if (self.has(file)) continue;
      read(file)
        .split('\n')
        .forEach((line, i) => {
          assert.ok(!cites.test(line), `${file}:${i + 1}: ${line.trim()}`);
        });
    }
  });

  test('behavior: the public documents cite no internal decision numbers or outside files', () => {
    const cites = /\bDECISIONS\b|\bSPEC\.md\b|\(D[0-9]{1,2}\)|\bD[0-9]{1,2}[:;,)]/;
    for (const file of PUBLIC_DOCS) {
      read(file)
        .split('\n')
        .forEach((line, i) => {
          assert.ok(!cites.test(line), `${file}:${i + 1}: ${line}`);
        });
    }
  });
});
