import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import type { TierId } from '../../src/access/tiers.ts';
import type { Settings } from '../../src/config.ts';
import { createService, type Service } from '../../src/service.ts';
import { openStore } from '../../src/store/open.ts';
import { embeddedSettings, QUIET, seedOneMarket, tempDir } from '../helpers.ts';

/**
 * Headless Chromium for the page tests: Debian's `chromium` package (CHROMIUM_PATH overrides).
 * Where it is missing the tests skip, except in CI (CI=true), where they must run.
 */
export function findChromium(): string | null {
  const candidates = process.env.CHROMIUM_PATH
    ? [process.env.CHROMIUM_PATH]
    : (process.env.PATH ?? '')
        .split(delimiter)
        .flatMap((dir) => ['chromium', 'chromium-browser'].map((name) => join(dir, name)));
  for (const file of candidates) {
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {}
  }
  return null;
}

const CHROMIUM = findChromium();

/** The `skip` option of a browser test: a reason when Chromium is missing outside CI, else false. */
export function skipWithoutChromium(): string | false {
  if (CHROMIUM) return false;
  if (process.env.CI === 'true') throw new Error('chromium is required in CI: apt-get install -y chromium');
  return 'chromium is not installed (apt-get install -y chromium); browser tests skipped';
}

export async function launchChromium(): Promise<Browser> {
  if (!CHROMIUM) throw new Error('chromium is not installed');
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // As root (CI containers) Chromium refuses to start sandboxed.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run'],
  });
}

/** What a page did: every request it made, and every console error or uncaught exception. */
export interface PageRecord {
  page: Page;
  requests: string[];
  /** Requests to any other origin than the server's (aborted, so the test never reaches the network). */
  foreign: string[];
  errors: string[];
}

/** A new page that records its requests and errors; requests to other origins are aborted. */
export async function recordedPage(browser: Browser, origin: string): Promise<PageRecord> {
  const page = await browser.newPage();
  const record: PageRecord = { page, requests: [], foreign: [], errors: [] };
  await page.setRequestInterception(true);
  page.on('request', (request) => {
    const url = request.url();
    record.requests.push(`${request.method()} ${url}`);
    if (url.startsWith('data:') || url.startsWith('blob:') || new URL(url).origin === origin) {
      void request.continue();
    } else {
      record.foreign.push(url);
      void request.abort();
    }
  });
  page.on('console', (message) => {
    if (message.type() === 'error')
      record.errors.push(`console: ${message.text()} ${JSON.stringify(message.location())}`);
  });
  page.on('pageerror', (error) => record.errors.push(`page error: ${String(error)}`));
  page.on('requestfailed', (request) => {
    if (!record.foreign.includes(request.url()))
      record.errors.push(`request failed: ${request.url()} ${request.failure()?.errorText}`);
  });
  return record;
}

export interface RunningService {
  service: Service;
  /** `http://127.0.0.1:PORT` */
  origin: string;
  /** A new live key of the tier on the account; returns the whole key. */
  key(tier: TierId, account?: string): Promise<string>;
  /** A call to the API with a key, as a client outside the browser makes it. */
  api(method: string, path: string, key: string, body?: unknown): Promise<{ status: number; json: any }>;
  close(): Promise<void>;
}

/**
 * The whole service in this process on a one-market embedded store (no seeding, no simulation
 * ticks), listening on a free port of 127.0.0.1.
 */
export async function startService(settings: Partial<Settings> = {}): Promise<RunningService> {
  const dataDir = tempDir('lrds-pages-');
  const store = await openStore({ dataDir, databaseUrl: null });
  await seedOneMarket(store);
  await store.close();
  const service = await createService({ ...embeddedSettings(dataDir), ...settings }, { server: QUIET });
  const origin = await service.app.listen({ port: 0, host: '127.0.0.1' });
  return {
    service,
    origin,
    async key(tier, account = 'acme') {
      const acct = await service.keys.ensureAccount(account);
      return (await service.keys.create({ accountId: acct.id, tier, mode: 'live' })).key;
    },
    async api(method, path, key, body) {
      const res = await fetch(origin + path, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: await res.json() };
    },
    close: () => service.close(),
  };
}
