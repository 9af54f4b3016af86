import assert from 'node:assert/strict';
import { test } from 'node:test';
import { register } from 'prom-client';
import { loadSettings, SettingsError } from '../src/config.ts';
import { portOf, startMetricsServer } from '../src/metrics.ts';
import { createTestApp } from './helpers.ts';

/** The value of one series in the exposition text, 0 when absent. */
function value(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : 0;
}

test('behavior: answers, refusals and key lookups are counted by route pattern, status and tier', async () => {
  const before = await register.metrics();
  const t = await createTestApp();
  const key = await t.key('free');
  for (let i = 0; i < 7; i++) await t.get('/api/v1/markets/search?query=usdc', key);
  await t.get('/api/v1/markets/no-such-market-1-x', key);
  await t.close();
  const after = await register.metrics();
  const delta = (series: string) => value(after, series) - value(before, series);
  const search = '{route="/api/v1/markets/search",method="GET",status="200",tier="free"}';
  assert.equal(delta(`lrds_http_requests_total${search}`), 5);
  assert.equal(
    delta('lrds_http_requests_total{route="/api/v1/markets/search",method="GET",status="429",tier="free"}'),
    2,
  );
  // the two searches past the rate, and the market lookup after them
  assert.equal(delta('lrds_admission_refusals_total{reason="RATE_LIMITED",tier="free"}'), 3);
  assert.ok(delta('lrds_key_lookups_total{result="hit"}') >= 7);
  assert.ok(delta('lrds_http_request_duration_seconds_count{route="/api/v1/markets/search"}') >= 7);
  // Route patterns, never raw URLs: no label holds what the client typed.
  assert.ok(!after.includes('no-such-market'));
});

test('behavior: the metrics server answers GET /metrics in the Prometheus text format, nothing else', async () => {
  const server = await startMetricsServer(0, '127.0.0.1');
  try {
    const base = `http://127.0.0.1:${portOf(server)}`;
    const res = await fetch(`${base}/metrics`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain/);
    const text = await res.text();
    assert.match(text, /^# HELP lrds_http_requests_total /m);
    assert.match(text, /^nodejs_eventloop_lag_seconds /m);
    assert.equal((await fetch(`${base}/`)).status, 404);
  } finally {
    server.close();
  }
});

test('error: METRICS_PORT must be a port', () => {
  assert.equal(loadSettings({}).metricsPort, null);
  assert.equal(loadSettings({ METRICS_PORT: '9464' }).metricsPort, 9464);
  assert.throws(() => loadSettings({ METRICS_PORT: 'x' }), SettingsError);
});
