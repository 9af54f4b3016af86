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
  // Beyond a day (timers overflow past 2^31 - 1 ms and would fire every turn): refused.
  assert.throws(() => loadSettings({ SIMULATION_TICK_MS: '3000000000' }), SettingsError);
});

test('error: every invalid setting is reported at once', () => {
  assert.throws(
    () => loadSettings({ PORT: 'x', SIMULATION_TICK_MS: '50', INSTANCES: '0' }),
    (err: unknown) =>
      err instanceof SettingsError &&
      /PORT/.test(err.message) &&
      /SIMULATION_TICK_MS: must be 0 \(stopped\) or an integer from 100 to 86400000, got '50'/.test(
        err.message,
      ) &&
      /INSTANCES/.test(err.message),
  );
});
