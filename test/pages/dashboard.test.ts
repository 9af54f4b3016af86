import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'puppeteer-core';
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

const text = (page: Page, selector: string) => page.$eval(selector, (e) => (e.textContent ?? '').trim());
/** A figure as the page shows it (`10,000`), as a number. */
const figure = async (page: Page, selector: string) => Number((await text(page, selector)).replace(/,/g, ''));

describe('quota dashboard in Chromium', { skip: skipWithoutChromium(), timeout: 60_000 }, () => {
  let s: RunningService;
  let browser: Browser;
  let key: string;
  let r: PageRecord;
  let usedBefore: number;

  before(async () => {
    // Webhooks to a receiver on this machine (the development switch).
    [s, browser] = await Promise.all([startService({ webhookAllowPrivate: true }), launchChromium()]);
    key = await s.key('pro', 'fund-a');
    await s.key('pro', 'fund-a'); // a second key of the account
    await s.key('pro', 'other'); // not the account's
    for (let i = 0; i < 3; i++) assert.equal((await s.api('GET', '/api/v1/markets', key)).status, 200);
    assert.equal((await s.api('GET', '/api/v1/markets/search?query=weth', key)).status, 200);
    usedBefore = (await s.api('GET', '/api/v1/client/quota', key)).json.data.daily.used;
    assert.equal(usedBefore, 4);
    r = await recordedPage(browser, s.origin);
    // Revoking asks for confirmation.
    r.page.on('dialog', (dialog) => void dialog.accept());
    await r.page.setViewport({ width: 1200, height: 1000 });
  });
  after(async () => {
    await browser?.close();
    await s?.close();
  });

  test('error: a refused key is forgotten and asked for again', async () => {
    const { page } = r;
    await page.goto(`${s.origin}/dashboard`, { waitUntil: 'networkidle0' });
    assert.equal(await page.title(), 'Quota dashboard · Lending Risk Data API');
    await page.type('#key-input', 'lrds_live_notakey');
    await page.click('#key-form button[type=submit]');
    await page.waitForFunction(() => document.getElementById('status')?.className === 'error');
    assert.match(await text(page, '#status'), /refused/);
    assert.equal(await page.evaluate(() => sessionStorage.length), 0);
    assert.equal(await page.$eval('#login', (e) => (e as { hidden: boolean }).hidden), false);
    // the API's own 401 is a failed resource load in the console: the only error expected
    assert.ok(
      r.errors.every((e) => e.includes('status of 401')),
      r.errors.join('\n'),
    );
    r.errors.length = 0;
  });

  test('default: the figures shown are those of the JSON API', async () => {
    const { page } = r;
    await page.type('#key-input', key);
    await page.click('#key-form button[type=submit]');
    await page.waitForSelector('#dashboard:not([hidden])');
    const quota = (await s.api('GET', '/api/v1/client/quota', key)).json.data;
    const keys = (await s.api('GET', '/api/v1/client/api-keys', key)).json.data;
    assert.equal(await text(page, '#tier'), quota.tier.name);
    assert.match(await text(page, '#rate'), new RegExp(`^${quota.rateLimit.perSecond} requests per second`));
    assert.equal(await figure(page, '#daily-used'), quota.daily.used);
    assert.equal(await figure(page, '#daily-limit'), quota.daily.limit);
    assert.equal(await figure(page, '#daily-remaining'), quota.daily.remaining);
    assert.equal(await figure(page, '#monthly-used'), quota.monthly.used);
    assert.equal(await figure(page, '#monthly-limit'), quota.monthly.limit);
    const reset = (iso: string) => `${iso.slice(0, 16).replace('T', ' ')} UTC`;
    assert.equal(await text(page, '#daily-reset'), reset(quota.daily.resetAt));
    assert.equal(await text(page, '#monthly-reset'), reset(quota.monthly.resetAt));
    // the account's keys, none of another account's
    const rows = await page.$$eval('#keys tr', (trs) => trs.map((tr) => tr.getAttribute('data-key-id')));
    assert.deepEqual(rows.sort(), keys.map((k: { id: string }) => k.id).sort());
    assert.equal(rows.length, 2);
    // usage per day and per endpoint, as counted
    const today = new Date().toISOString().slice(0, 10);
    assert.ok(await page.$(`#per-day rect[data-date="${today}"]`), 'a bar for today');
    assert.equal(await text(page, '#per-endpoint [data-endpoint="GET /api/v1/markets"]'), '3');
    assert.equal(await text(page, '#per-endpoint [data-endpoint="GET /api/v1/markets/search"]'), '1');
  });

  test('default: the key is kept in sessionStorage only, never in the URL', async () => {
    const { page } = r;
    const stored = await page.evaluate(() => ({
      session: Object.keys(sessionStorage).map((k) => sessionStorage.getItem(k)),
      local: localStorage.length,
      cookie: document.cookie,
    }));
    assert.deepEqual(stored, { session: [key], local: 0, cookie: '' });
    assert.ok(
      r.requests.every((req) => !req.includes(key)),
      'no URL holds the key',
    );
    // a reload opens the dashboard without asking again
    await page.reload({ waitUntil: 'networkidle0' });
    await page.waitForSelector('#dashboard:not([hidden])');
    assert.equal(await page.$eval('#login', (e) => (e as { hidden: boolean }).hidden), true);
  });

  test('behavior: a created key is shown once and works; revoked, it is refused', async () => {
    const { page } = r;
    await page.type('#new-name', 'ci bot');
    await page.click('#create-form button[type=submit]');
    await page.waitForSelector('#created:not([hidden])');
    const created = await page.$eval('#created-key', (e) => (e as { value: string }).value);
    assert.match(created, /^lrds_live_/);
    const profile = await s.api('GET', '/api/v1/client/profile', created);
    assert.equal(profile.status, 200);
    assert.equal(profile.json.data.key.name, 'ci bot');
    assert.equal(profile.json.data.account.name, 'fund-a');
    const id = profile.json.data.key.id as string;
    await page.waitForSelector(`#keys tr[data-key-id="${id}"]`);
    await page.click('#created-done');
    assert.equal(await page.$eval('#created-key', (e) => (e as { value: string }).value), '');
    assert.ok(!(await page.content()).includes(created), 'no longer on the page');

    await page.click(`button[data-revoke="${id}"]`);
    await page.waitForFunction(
      (keyId) =>
        document
          .querySelector(`#keys tr[data-key-id="${keyId}"] .key-status`)
          ?.textContent?.startsWith('revoked'),
      { timeout: 5000 },
      id,
    );
    assert.equal((await s.api('GET', '/api/v1/client/profile', created)).status, 401);
    const listed = (await s.api('GET', '/api/v1/client/api-keys', key)).json.data;
    assert.notEqual(listed.find((k: { id: string }) => k.id === id).revokedAt, null);
  });

  test('behavior: webhooks panel: create shows the secret once, send test, its delivery, delete', async () => {
    const { page } = r;
    const got: string[] = [];
    const receiver = createServer((req, res) => {
      got.push(String(req.headers['lrds-event-id']));
      req.resume();
      req.on('end', () => res.writeHead(204).end());
    });
    await new Promise<void>((done) => receiver.listen(0, '127.0.0.1', done));
    try {
      const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
      await page.type('#wh-url', url);
      await page.type('#wh-threshold', '1.2');
      await page.click('#wh-form button[type=submit]');
      await page.waitForSelector('#wh-created:not([hidden])');
      const secret = await page.$eval('#wh-secret', (e) => (e as { value: string }).value);
      assert.match(secret, /^whsec_/);
      const listed = (await s.api('GET', '/api/v1/client/webhooks', key)).json.data;
      assert.equal(listed.length, 1);
      const id = listed[0].id as string;
      assert.equal(listed[0].url, url);
      assert.deepEqual(listed[0].filters, { healthFactorBelow: 1.2 });
      await page.waitForSelector(`#webhooks tr[data-webhook-id="${id}"]`);
      await page.click('#wh-created-done');
      assert.ok(!(await page.content()).includes(secret), 'the secret is no longer on the page');
      await page.click(`button[data-wh-test="${id}"]`);
      await page.waitForSelector('#deliveries-box:not([hidden]) #deliveries tr[data-delivery-id]');
      // Delivered by the server's delivery loop; the panel shows it once refreshed.
      const end = Date.now() + 10_000;
      for (;;) {
        const state = await page.$eval('#deliveries .delivery-status', (e) => (e.textContent ?? '').trim());
        if (state === 'delivered') break;
        if (Date.now() > end) throw new Error(`delivery still ${state}`);
        await new Promise((done) => setTimeout(done, 200));
        await page.click(`button[data-wh-deliveries="${id}"]`);
      }
      assert.equal(got.length, 1);
      await page.click(`button[data-wh-delete="${id}"]`);
      await page.waitForFunction(() => !document.querySelector('#webhooks tr[data-webhook-id]'), {
        timeout: 5000,
      });
      assert.deepEqual((await s.api('GET', '/api/v1/client/webhooks', key)).json.data, []);
    } finally {
      await new Promise<void>((done) => receiver.close(() => done()));
    }
  });

  test('default: no console error, no outside request, and nothing counted toward the quota', async () => {
    assert.deepEqual(r.errors, []);
    assert.deepEqual(r.foreign, []);
    const paths = new Set(r.requests.map((req) => new URL(req.split(' ')[1]!).pathname));
    assert.ok(paths.has('/dashboard') && paths.has('/api/v1/client/quota'));
    const quota = (await s.api('GET', '/api/v1/client/quota', key)).json.data;
    assert.equal(quota.daily.used, usedBefore);
  });
});
