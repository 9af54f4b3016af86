#!/usr/bin/env node
/**
 * `lrds`: the command line. This file dispatches to the commands (one file each under
 * commands/) and tells a failure in one line with its exit code: 2 for a usage or configuration
 * mistake, 1 for anything else.
 */

import { readFileSync } from 'node:fs';
import { enableCompileCache } from 'node:module';
import { loadSettings } from '../config.ts';
import { CommandError, fail, UsageError } from './command.ts';
import { ingest } from './commands/ingest.ts';
import { keys } from './commands/keys.ts';
import { seed } from './commands/seed.ts';
import { serve } from './commands/serve.ts';

const SETTINGS_LINE =
  'Settings come from the environment: PORT, HOST, DATA_DIR, DATABASE_URL, REDIS_URL, TIERS_FILE, SOURCES_FILE, LOG_LEVEL, INSTANCES.';

const USAGE = `lrds: Lending Risk Data Service

Usage:
  lrds serve [--workers N|auto]                start the HTTP API (seeds the sandbox on first start);
                                               N workers share the port (needs REDIS_URL)
  lrds seed [--profile default|large] [--seed N]
                                               replace the dataset with a generated sandbox
  lrds ingest [--once]                         read the sources of SOURCES_FILE into the store
                                               (--once: one pass, exit 1 if a source failed)
  lrds keys create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]
                                               create an API key (a new account of its own unless
                                               --account names one); prints the key alone on stdout
  lrds keys list [--account NAME] [--json]     list keys and accounts (never the whole key)
  lrds keys revoke ID                          revoke a key; refused from its next request
  lrds keys set-tier ID free|pro|enterprise    change a key's tier
  lrds keys move ID [--account NAME]           move a key to another account (a new one without --account)
  lrds --version                               print the version

'lrds <command> --help' describes one command.
${SETTINGS_LINE}`;

async function main(argv: string[]): Promise<void> {
  // The modules a command loads (the service: about four seconds of a start, half of it
  // stripping TypeScript's types) are compiled once and cached on disk: in NODE_COMPILE_CACHE,
  // else the system's temporary folder; NODE_DISABLE_COMPILE_CACHE=1 turns it off. The cluster's
  // workers and the history worker thread inherit the folder from the environment.
  const cache = enableCompileCache();
  if (cache.directory) process.env.NODE_COMPILE_CACHE ??= cache.directory;
  const [command, ...args] = argv;
  if (command === undefined || command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  if (command === '--version' || command === '-v' || command === 'version') {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const { API_VERSION } = await import('../http/app.ts');
    process.stdout.write(`lrds ${pkg.version} (API ${API_VERSION}, Node ${process.versions.node})\n`);
    return;
  }
  const settings = loadSettings();
  switch (command) {
    case 'serve':
      return serve(settings, args);
    case 'seed':
      return seed(settings, args);
    case 'keys':
      return keys(settings, args);
    case 'ingest':
      return ingest(settings, args);
    default:
      fail(`unknown command '${command}'\n\n${USAGE}`);
  }
}

/** A failure of the environment a user can fix (a port taken, a database unreachable): one line, no stack. */
function environmentProblem(err: unknown): string | null {
  const e = err as NodeJS.ErrnoException & { address?: string; port?: number };
  if (e?.code === 'EADDRINUSE')
    return `port ${e.port ?? ''} is already in use${e.address ? ` on ${e.address}` : ''}: stop the other server or set PORT`;
  if (e?.code === 'EACCES' && e.syscall === 'listen')
    return `no permission to listen on port ${e.port ?? ''}: set PORT above 1023`;
  if (e?.code === 'EADDRNOTAVAIL') return `HOST ${e.address ?? ''} is not an address of this machine`;
  if (e instanceof Error && e.name === 'StoreWriteError')
    return `${e.message} (free space on its filesystem, or set DATA_DIR to one with room)`;
  if (e?.code === 'ENOSPC')
    return `no space left on the device: ${e.path ?? e.message} (free space, or set DATA_DIR)`;
  if (e?.code === 'ECONNREFUSED')
    return `cannot connect to ${e.address ?? ''}:${e.port ?? ''}: is the database or Redis running? (${e.message})`;
  return null;
}

main(process.argv.slice(2)).catch((err: unknown) => {
  if (
    err instanceof UsageError ||
    (err instanceof Error && ['SettingsError', 'TierConfigError', 'SourcesConfigError'].includes(err.name))
  ) {
    process.stderr.write(`lrds: ${err.message}\n`);
    process.exit(2);
  }
  const problem =
    err instanceof CommandError || (err instanceof Error && err.name === 'StoreUnavailableError')
      ? (err as Error).message
      : environmentProblem(err);
  if (problem) {
    process.stderr.write(`lrds: ${problem}\n`);
    process.exit(1);
  }
  process.stderr.write(`lrds: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
