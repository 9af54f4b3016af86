import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import { LrdsClient, type OperationId } from '../../sdk/src/index.ts';
import { createTestApp } from '../helpers.ts';

/**
 * The SDK's types cannot drift from the API: sdk/openapi.json must be the document the app
 * serves, and sdk/src/schema.ts must be what openapi-typescript makes of it. The fix for any
 * failure here is `npm run generate --prefix sdk` (then commit both files).
 */

const SDK = new URL('../../sdk/', import.meta.url);
const REGENERATE = 'run `npm run generate --prefix sdk` and commit sdk/openapi.json and sdk/src/schema.ts';
const savedText = readFileSync(new URL('openapi.json', SDK), 'utf8');

async function servedDocument(): Promise<Record<string, unknown>> {
  const t = await createTestApp();
  try {
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    assert.equal(res.statusCode, 200);
    return res.json();
  } finally {
    await t.close();
  }
}

describe('SDK drift', () => {
  test('behavior: sdk/openapi.json is the document the API serves, as the dump writes it', async () => {
    const served = await servedDocument();
    assert.deepEqual(JSON.parse(savedText), served, `the API's OpenAPI document changed: ${REGENERATE}`);
    assert.equal(savedText, `${JSON.stringify(served, null, 2)}\n`, REGENERATE);
  });

  test('behavior: sdk/src/schema.ts names the hash of sdk/openapi.json', () => {
    const schema = readFileSync(new URL('src/schema.ts', SDK), 'utf8');
    const named = /^\/\/ Generated from sdk\/openapi\.json \(sha256 ([0-9a-f]{64})\)/.exec(schema)?.[1];
    assert.ok(named, 'sdk/src/schema.ts has no generated header');
    assert.equal(named, createHash('sha256').update(savedText).digest('hex'), REGENERATE);
  });

  test('behavior: regenerating sdk/src/schema.ts from sdk/openapi.json changes nothing', {
    // CI installs the SDK's dev dependencies (`npm ci --prefix sdk`); elsewhere they may be missing.
    skip:
      process.env.CI !== 'true' && !existsSync(new URL('node_modules/openapi-typescript/package.json', SDK))
        ? 'openapi-typescript is not installed: npm ci --prefix sdk'
        : false,
  }, () => {
    const script = new URL('scripts/generate-types.ts', SDK).pathname;
    try {
      execFileSync(process.execPath, [script, '--check'], { stdio: 'pipe' });
    } catch (err) {
      const stderr = String((err as { stderr?: unknown }).stderr ?? err);
      assert.fail(`${stderr.trim()}\n${REGENERATE}`);
    }
  });

  test('behavior: the client has a method for every operation of the document', async () => {
    const doc = JSON.parse(savedText) as { paths: Record<string, Record<string, { operationId?: string }>> };
    const operations = Object.values(doc.paths).flatMap((item) =>
      Object.values(item).flatMap((op) => (op.operationId ? [op.operationId] : [])),
    );
    assert.ok(operations.length >= 11);
    const client = LrdsClient.prototype as unknown as Record<string, unknown>;
    const missing = operations.filter((id) => typeof client[id] !== 'function');
    assert.deepEqual(missing, [], 'operations without a method in sdk/src/client.ts');
    // The same, for the type checker: every OperationId is a member of the client.
    const complete: [Exclude<OperationId, keyof LrdsClient>] extends [never] ? true : false = true;
    assert.ok(complete);
  });
});
