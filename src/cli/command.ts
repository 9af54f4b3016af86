/**
 * What the commands of `lrds` share: usage mistakes and other failures (told by main.ts in one
 * line, with their exit code), argument parsing, help, the store, a progress bar.
 */

import { parseArgs } from 'node:util';
import { SingleBar } from 'cli-progress';
import type { Settings } from '../config.ts';
import type { Store } from '../store/types.ts';

// The service's modules (Fastify, the stores, the generator) are loaded by the commands that
// need them, so that help, version and usage mistakes answer at once.
export const loadService = () => import('../service.ts');

/** The command was written wrong (an unknown option, a missing value): exit 2. */
export class UsageError extends Error {}

/** The command was right but cannot be done (a key that does not exist): one line, exit 1. */
export class CommandError extends Error {}

export function fail(message: string): never {
  throw new UsageError(message);
}

export function cannot(message: string): never {
  throw new CommandError(message);
}

/** Prints a command's help and exits 0. */
export function help(text: string): never {
  process.stdout.write(`${text}\n`);
  process.exit(0);
}

export type OptionSpec = Record<string, { type: 'string' | 'boolean'; default?: string | boolean }>;

/**
 * Parses a command's arguments: unknown options, a missing option value and more positionals
 * than `maxPositionals` are usage mistakes (one line, then `usage`; exit 2); `--help` prints `usage`.
 */
export function parseCommand<O extends OptionSpec>(
  usage: string,
  args: string[],
  options: O,
  maxPositionals = 0,
) {
  if (args.includes('--help') || args.includes('-h')) help(usage);
  let parsed: ReturnType<
    typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
  >;
  try {
    parsed = parseArgs({ args, options, allowPositionals: true, strict: true });
  } catch (err) {
    fail(`${(err as Error).message.split(/\n|\. To specify/)[0]}\n\n${usage}`);
  }
  if (parsed.positionals.length > maxPositionals) {
    fail(`unexpected argument '${parsed.positionals[maxPositionals]}'\n\n${usage}`);
  }
  return parsed;
}

export async function withStore<T>(settings: Settings, fn: (store: Store) => Promise<T>): Promise<T> {
  const store = await (await loadService()).openStore(settings);
  try {
    return await fn(store);
  } finally {
    await store.close();
  }
}

export function progressBar(label: string) {
  const format = `${label} [{bar}] {percentage}% | {value}/{total} | {duration}s`;
  const bar = new SingleBar(
    { format, stream: process.stderr, hideCursor: true },
    { format, barCompleteChar: '#', barIncompleteChar: '.' },
  );
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, 0);
        started = true;
      }
      bar.setTotal(total);
      bar.update(done);
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Where the metrics server listens, and its token. */
export function metricsAccess(settings: Settings) {
  return { host: settings.metricsHost ?? '127.0.0.1', token: settings.metricsToken ?? null };
}
