import type { Settings } from '../../config.ts';
import { fail, loadService, parseCommand, progressBar, withStore } from '../command.ts';

/** `lrds seed --help`, also printed after a usage mistake. */
const SEED_HELP = `Usage: lrds seed [--profile default|large] [--seed N]

Replaces the dataset with a generated sandbox, with a progress bar.
  --profile   default (about 4,000 markets, 50,000 positions) or large (20,000 and 1,000,000)
  --seed N    the generator's seed (same seed, same data)`;

export async function seed(settings: Settings, args: string[]): Promise<void> {
  const { values } = parseCommand(SEED_HELP, args, {
    profile: { type: 'string', default: 'default' },
    seed: { type: 'string' },
  });
  const profile = values.profile;
  if (profile !== 'default' && profile !== 'large')
    fail(`--profile must be default or large, got '${profile}'`);
  const { seedStore, DEFAULT_SEED } = await loadService();
  const seedValue = values.seed === undefined ? DEFAULT_SEED : Number(values.seed);
  if (!Number.isSafeInteger(seedValue) || seedValue < 0)
    fail(`--seed must be a non-negative integer, got '${values.seed}'`);
  const started = performance.now();
  const bar = progressBar(`Seeding ${profile}`);
  const info = await withStore(settings, (store) =>
    seedStore(
      store,
      profile,
      seedValue,
      (d, t) => bar.update(d, t),
      false,
      undefined,
      settings.sandboxHistoryDays,
    ),
  );
  bar.stop();
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  process.stderr.write(
    `Seeded ${info.marketCount} markets and ${info.positionCount} positions (profile ${profile}, seed ${seedValue}) in ${seconds} s.\n`,
  );
}
