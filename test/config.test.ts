import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadSettings, SettingsError } from '../src/config.ts';

test('default: settings from an empty environment', () => {
  const s = loadSettings({});
  assert.equal(s.port, 8080);
  assert.equal(s.databaseUrl, null);
  assert.equal(s.redisUrl, null);
  assert.equal(s.instances, null);
  assert.equal(s.simulationTickMs, 5000);
});

test('behavior: SIMULATION_TICK_MS sets the tick; 0 stops the simulation', () => {
  assert.equal(loadSettings({ SIMULATION_TICK_MS: '0' }).simulationTickMs, 0);
  assert.equal(loadSettings({ SIMULATION_TICK_MS: '1000' }).simulationTickMs, 1000);
  assert.equal(loadSettings({ SIMULATION_TICK_MS: ' ' }).simulationTickMs, 5000);
  assert.equal(loadSettings({ SIMULATION_TICK_MS: '60000' }).simulationTickMs, 60_000);
  // Not a divisor of a minute (rounds fall on whole minutes), or beyond one: refused.
  assert.throws(() => loadSettings({ SIMULATION_TICK_MS: '7000' }), SettingsError);
  assert.throws(() => loadSettings({ SIMULATION_TICK_MS: '120000' }), SettingsError);
});

test('error: every invalid setting is reported at once', () => {
  assert.throws(
    () => loadSettings({ PORT: 'x', SIMULATION_TICK_MS: '50', INSTANCES: '0' }),
    (err: unknown) =>
      err instanceof SettingsError &&
      /PORT/.test(err.message) &&
      /SIMULATION_TICK_MS: must be 0 \(stopped\) or an integer from 100 to 60000 that divides 60000, got '50'/.test(
        err.message,
      ) &&
      /INSTANCES/.test(err.message),
  );
});

test('behavior: SANDBOX_HISTORY_DAYS and HISTORY_RETENTION_DAYS', () => {
  assert.equal(loadSettings({}).sandboxHistoryDays, 365);
  assert.equal(loadSettings({}).historyRetentionDays, null);
  assert.equal(loadSettings({ SANDBOX_HISTORY_DAYS: '0' }).sandboxHistoryDays, 0);
  assert.equal(loadSettings({ HISTORY_RETENTION_DAYS: '90' }).historyRetentionDays, 90);
  assert.throws(
    () => loadSettings({ SANDBOX_HISTORY_DAYS: '366' }),
    /SANDBOX_HISTORY_DAYS: must be an integer 0-365/,
  );
  assert.throws(
    () => loadSettings({ HISTORY_RETENTION_DAYS: '0' }),
    /HISTORY_RETENTION_DAYS: must be a positive integer/,
  );
});

test('behavior: SANDBOX_HOURLY_HISTORY_DAYS', () => {
  assert.equal(loadSettings({}).sandboxHourlyHistoryDays, 30);
  assert.equal(loadSettings({ SANDBOX_HOURLY_HISTORY_DAYS: '365' }).sandboxHourlyHistoryDays, 365);
  assert.throws(() => loadSettings({ SANDBOX_HOURLY_HISTORY_DAYS: '-1' }), /SANDBOX_HOURLY_HISTORY_DAYS/);
});

test('behavior: ANON_RATE_PER_SECOND, ANON_BURST and TRUST_PROXY', () => {
  const d = loadSettings({});
  assert.equal(d.anonymousRatePerSecond, 5);
  assert.equal(d.anonymousBurst, 30);
  assert.equal(d.trustProxy, false);
  const s = loadSettings({
    ANON_RATE_PER_SECOND: '0.5',
    ANON_BURST: '10',
    TRUST_PROXY: '10.0.0.0/8, 127.0.0.1',
  });
  assert.equal(s.anonymousRatePerSecond, 0.5);
  assert.equal(s.anonymousBurst, 10);
  assert.equal(s.trustProxy, '10.0.0.0/8, 127.0.0.1');
  assert.equal(loadSettings({ TRUST_PROXY: '2' }).trustProxy, 2);
  assert.equal(loadSettings({ TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(loadSettings({ ANON_RATE_PER_SECOND: '0' }).anonymousRatePerSecond, 0);
  assert.throws(() => loadSettings({ ANON_RATE_PER_SECOND: '-1' }), /ANON_RATE_PER_SECOND/);
  assert.throws(() => loadSettings({ ANON_BURST: '0' }), /ANON_BURST/);
  assert.throws(() => loadSettings({ TRUST_PROXY: 'everyone' }), /TRUST_PROXY/);
});
