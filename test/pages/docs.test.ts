import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
import { installedVersion } from '../../src/http/pages/static-asset.ts';
import {
  launchChromium,
  type PageRecord,
  type RunningService,
  recordedPage,
  skipWithoutChromium,
  startService,
} from './browser.ts';

/** In-page callbacks run in Chromium; the project is typed without the DOM library. */
declare const document: any;

/** Buttons and links of Scalar that need its hosted services (they must not be on the page). */
const HOSTED = [
  'Ask AI',
  'Generate MCP',
  'Connect MCP',
  'Deploy',
  'Generate SDK',
  'Open API Client',
  'Developer Tools',
];

/** `text` as a part of a pattern, matching itself. */
const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Clicks the first element of `selector` whose text starts with `text` (or matches it, a
 * pattern); a visible one when there is one (Scalar keeps hidden copies of buttons for other
 * layouts, and the sidebar's collapsed entries).
 */
async function clickText(page: Page, selector: string, text: string | RegExp): Promise<void> {
  const { source, flags } = typeof text === 'string' ? new RegExp(`^${literal(text)}`) : text;
  await page.waitForFunction(
    (sel, src, fl) =>
      [...document.querySelectorAll(sel)].some((e) => new RegExp(src, fl).test((e.textContent ?? '').trim())),
    { timeout: 5000 },
    selector,
    source,
    flags,
  );
  await page.evaluate(
    (sel, src, fl) => {
      const all = [...document.querySelectorAll(sel)].filter((e) =>
        new RegExp(src, fl).test((e.textContent ?? '').trim()),
      );
      const el = all.find((e) => e.offsetParent !== null) ?? all[0];
      (el as { click(): void }).click();
    },
    selector,
    source,
    flags,
  );
}

describe('docs page in Chromium', { skip: skipWithoutChromium(), timeout: 60_000 }, () => {
  let s: RunningService;
  let browser: Browser;
  let key: string;
  let r: PageRecord;

  before(async () => {
    [s, browser] = await Promise.all([startService(), launchChromium()]);
    key = await s.key('pro');
    r = await recordedPage(browser, s.origin);
    await r.page.setViewport({ width: 1400, height: 1000 });
    await r.page.goto(`${s.origin}/docs`, { waitUntil: 'networkidle0', timeout: 20_000 });
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test('default: titled for this API, with Getting started, and nothing from any other host', async () => {
    const { page } = r;
    assert.equal(new URL(page.url()).pathname, '/docs/');
    assert.equal(await page.title(), 'Lending Risk Data API');
    const h1 = await page.$eval('h1', (e) => e.textContent?.trim());
    assert.equal(h1, 'Lending Risk Data API');
    const text = await page.evaluate(() => document.body.innerText);
    for (const expected of [
      'Getting started',
      'npx lrds keys create',
      'curl',
      'RateLimit-Policy',
      'Retry-After',
    ])
      assert.ok(text.includes(expected), `page shows ${expected}`);
    assert.deepEqual(r.foreign, [], 'no request to another host');
    assert.deepEqual(r.errors, [], 'no console error');
    // the script at its versioned URL, the document, nothing else (no fonts, no favicon)
    const version = installedVersion('@scalar/fastify-api-reference');
    assert.deepEqual(
      r.requests.map((req) => req.replace(s.origin, '')),
      ['GET /docs', 'GET /docs/', `GET /docs/js/scalar.js?v=${version}`, 'GET /api/v1/openapi.json'],
    );
  });

  test('default: no button or link of a hosted service', async () => {
    const { page } = r;
    const content = await page.evaluate(() => document.body.textContent ?? '');
    for (const label of HOSTED) assert.ok(!content.includes(label), `no "${label}"`);
    const links = await page.$$eval('a[href]', (as) => as.map((a) => (a as { href: string }).href));
    for (const href of links) {
      assert.ok(!/(client|dashboard|proxy|registry|api)\.scalar\.com/.test(href), `link to ${href}`);
    }
  });

  test('default: bearer auth is selected', async () => {
    const { page } = r;
    const content = await page.evaluate(() => document.body.textContent ?? '');
    assert.ok(content.includes('Selected Auth Type: bearerAuth'), 'bearerAuth selected');
    assert.ok(await page.$('input[placeholder="Token"]'), 'a bearer token field');
  });

  test('behavior: Test Request sends the key entered as a bearer token and shows the answer', async () => {
    const { page } = r;
    await page.type('input[placeholder="Token"]', key);
    await clickText(page, 'a, button', 'Client');
    await clickText(page, 'a, button', 'Quota dashboard');
    await clickText(page, 'button', 'Test Request(get /client/quota)');
    const url = `${s.origin}/api/v1/client/quota`;
    const answered = page.waitForResponse((res) => res.url() === url, { timeout: 10_000 });
    // The client's Send, named for its request (the sidebar's "Send a test event" starts alike).
    await clickText(page, 'button', new RegExp(`^Send.*get request to ${literal(url)}$`));
    const res = await answered;
    assert.equal(res.request().headers().authorization, `Bearer ${key}`);
    assert.equal(res.status(), 200);
    assert.equal((await res.json()).data.tier.name, 'Pro');
    await page.waitForFunction(() => (document.body.textContent ?? '').includes('200 OK'), { timeout: 5000 });
    assert.deepEqual(r.foreign, []);
    assert.deepEqual(r.errors, []);
  });
});
