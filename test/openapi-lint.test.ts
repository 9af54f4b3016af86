import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import { createTestApp, type TestApp, tempDir } from './helpers.ts';

/**
 * The document the service serves, linted as published: Redocly's `recommended` rules
 * (redocly.yaml) and Spectral's `spectral:oas` (.spectral.yaml), both with every rule on. Each
 * linter runs as its own CLI on this Node, against the document written to a temporary file.
 */

const run = promisify(execFile);
const ROOT = new URL('..', import.meta.url).pathname;
const require = createRequire(import.meta.url);
/** A package's CLI script, as its package.json names it. */
function cli(pkg: string, bin: string): string {
  const manifest = require(`${pkg}/package.json`) as { bin: Record<string, string> };
  return join(require.resolve(`${pkg}/package.json`), '..', manifest.bin[bin]!);
}

/** Runs a linter; its exit status is not the verdict (it fails on errors), its JSON report is. */
async function lint(args: string[]): Promise<string> {
  try {
    const { stdout } = await run(process.execPath, args, { cwd: ROOT, maxBuffer: 64 * 1024 * 1024 });
    return stdout;
  } catch (err) {
    const { stdout, stderr } = err as { stdout?: string; stderr?: string };
    if (stdout?.trim()) return stdout;
    throw new Error(`linter failed to run: ${stderr ?? String(err)}`);
  }
}

let t: TestApp;
let file: string;

before(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ url: '/api/v1/openapi.json' });
  assert.equal(res.statusCode, 200);
  file = join(tempDir('lrds-openapi-'), 'openapi.json');
  writeFileSync(file, res.body);
});
after(() => t.close());

describe('OpenAPI lint', () => {
  test('behavior: Redocly recommended finds no error and no warning', async () => {
    const out = await lint([
      cli('@redocly/cli', 'redocly'),
      'lint',
      file,
      '--config',
      join(ROOT, 'redocly.yaml'),
      '--format=json',
    ]);
    const report = JSON.parse(out) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const problems = report.problems.map(
      (p) => `${p.severity} ${p.ruleId} at ${p.location[0]?.pointer ?? '?'}: ${p.message}`,
    );
    assert.deepEqual(problems, []);
    assert.equal(report.totals.errors + report.totals.warnings, 0);
  });

  test('behavior: Spectral spectral:oas finds no error and no warning', async () => {
    const out = await lint([
      cli('@stoplight/spectral-cli', 'spectral'),
      'lint',
      file,
      '--ruleset',
      join(ROOT, '.spectral.yaml'),
      '--format',
      'json',
      '--quiet',
    ]);
    // severity: 0 error, 1 warning, 2 information, 3 hint
    const results = JSON.parse(out) as { code: string; severity: number; message: string; path: string[] }[];
    const problems = results
      .filter((r) => r.severity <= 1)
      .map((r) => `${r.severity === 0 ? 'error' : 'warning'} ${r.code} at ${r.path.join('.')}: ${r.message}`);
    assert.deepEqual(problems, []);
  });
});
