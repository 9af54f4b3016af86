import type { KeyService } from '../../access/keys.ts';
import { loadTiers, TIER_IDS, type TierId } from '../../access/tiers.ts';
import type { Settings } from '../../config.ts';
import { must } from '../../domain/must.ts';
import type { Store } from '../../store/types.ts';
import { cannot, fail, help, type OptionSpec, parseCommand, withStore } from '../command.ts';

/** Help of `lrds keys` and of each of its commands (`--help`, also printed after a usage mistake). */
const KEYS_HELP = {
  keys: `Usage: lrds keys <command>

  create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]
                          create an API key (in a new account of its own unless --account
                          names one); prints the key alone on stdout
  list [--account NAME] [--json]
                          list keys and their accounts (prefix and id; never the whole key)
  revoke ID               revoke a key; refused from its next request
  set-tier ID free|pro|enterprise
                          change a key's tier
  move ID [--account NAME]
                          move a key to another account (a new one of its own without --account)

'lrds keys <command> --help' describes one command.`,
  create: `Usage: lrds keys create --tier free|pro|enterprise [--test] [--account NAME] [--name LABEL]

Creates an API key and prints it alone on stdout: the only time it is shown (only its hash is kept).
An account is one customer: its keys list and revoke each other (a key those of its tier and below),
and share its key-creation budget and its quota bound. Without --account the key gets a new account of its own, named after its id
(acct_...), so keys handed to different customers are never put together; give the same
--account NAME to every key of one customer.
  --tier      the key's tier (required)
  --test      a test key (served the fixed sandbox, never live data)
  --account   the account it belongs to (created if new; default: a new account of its own)
  --name      a label shown in listings`,
  list: `Usage: lrds keys list [--account NAME] [--json]

Lists keys as a table: account, id, first 14 characters, mode, tier, status, creation time, name.
  --account   only this account's keys
  --json      one JSON array instead of the table, for scripts`,
  revoke: `Usage: lrds keys revoke ID

Revokes the key with this id (see 'lrds keys list'): refused from its next request.`,
  'set-tier': `Usage: lrds keys set-tier ID free|pro|enterprise

Moves the key with this id to another tier: applies to its next requests.`,
  move: `Usage: lrds keys move ID [--account NAME]

Moves the key with this id to another account: applies to its next requests. The key keeps its
tier, mode and usage; from then on it lists, revokes and is limited with the keys of the account
it joined, and its usage counts toward that account's quota bound.
  --account   the account to move it to (created if new; default: a new account of its own)`,
} as const;

/** Columns padded to their widest cell, for a terminal. */
function table(header: string[], rows: string[][]): string {
  // A row without a cell of a column counts as empty there.
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

const KEY_COMMANDS = {
  create: {
    options: {
      tier: { type: 'string' },
      test: { type: 'boolean' },
      account: { type: 'string' },
      name: { type: 'string' },
    },
    positionals: 0,
  },
  list: { options: { account: { type: 'string' }, json: { type: 'boolean' } }, positionals: 0 },
  revoke: { options: {}, positionals: 1 },
  'set-tier': { options: {}, positionals: 2 },
  move: { options: { account: { type: 'string' } }, positionals: 1 },
} as const satisfies Record<string, { options: OptionSpec; positionals: number }>;

export async function keys(settings: Settings, args: string[]): Promise<void> {
  const [command, ...rest] = args;
  if (command === undefined || command === '--help' || command === '-h') help(KEYS_HELP.keys);
  if (!Object.hasOwn(KEY_COMMANDS, command)) fail(`unknown keys command '${command}'\n\n${KEYS_HELP.keys}`);
  const spec = KEY_COMMANDS[command as keyof typeof KEY_COMMANDS];
  const usage = KEYS_HELP[command as keyof typeof KEY_COMMANDS];
  const { values, positionals } = parseCommand(usage, rest, spec.options as OptionSpec, spec.positionals) as {
    values: Record<string, string | boolean | undefined>;
    positionals: string[];
  };
  const str = (v: string | boolean | undefined) => (typeof v === 'string' ? v : undefined);
  const tiers = loadTiers(settings.tiersFile);
  const isTier = (t: string | undefined): t is TierId =>
    t !== undefined && (TIER_IDS as readonly string[]).includes(t);
  // Checked before the store is opened: a usage mistake needs no database.
  if (command === 'create' && !isTier(str(values.tier)))
    fail(`--tier must be one of ${TIER_IDS.join(', ')}\n\n${KEYS_HELP.create}`);
  if (command === 'revoke' && positionals.length !== 1) fail(KEYS_HELP.revoke);
  if (command === 'move' && positionals.length !== 1) fail(KEYS_HELP.move);
  if (command === 'move' && str(values.account)?.trim() === '') fail('--account must name an account');
  if (command === 'create' && str(values.account)?.trim() === '') fail('--account must name an account');
  if (command === 'set-tier' && (positionals.length !== 2 || !isTier(positionals[1])))
    fail(`usage: lrds keys set-tier ID ${TIER_IDS.join('|')}`);
  await withStore(settings, async (store) => {
    const [{ createKeyEvents }, { KeyService }] = await Promise.all([
      import('../../scale.ts'),
      import('../../access/keys.ts'),
    ]);
    const events = createKeyEvents(settings.redisUrl);
    const service = new KeyService(store, { events });
    try {
      await keyCommand(store, service);
    } finally {
      await events.close();
    }
  });

  async function keyCommand(store: Store, service: KeyService): Promise<void> {
    switch (command) {
      case 'create': {
        const accountName = str(values.account);
        // One customer per account: without a name, the key gets an account of its own.
        const account =
          accountName === undefined ? await service.newAccount() : await service.ensureAccount(accountName);
        const { key } = await service.create({
          accountId: account.id,
          tier: tiers[str(values.tier) as TierId].id,
          mode: values.test === true ? 'test' : 'live',
          name: str(values.name) ?? null,
        });
        process.stdout.write(`${key}\n`);
        return;
      }
      case 'list': {
        const accountName = str(values.account);
        const account = accountName === undefined ? null : await store.findAccountByName(accountName);
        if (accountName !== undefined && !account) fail(`no account named '${accountName}'`);
        const list = await store.listKeys(account?.id);
        const names = new Map<string, string>();
        for (const k of list) {
          if (!names.has(k.accountId))
            names.set(k.accountId, (await store.getAccount(k.accountId))?.name ?? '?');
        }
        if (values.json === true) {
          const json = list.map((k) => ({
            account: names.get(k.accountId),
            id: k.id,
            prefix: k.prefix,
            mode: k.mode,
            tier: k.tier,
            name: k.name,
            accountId: k.accountId,
            createdAt: k.createdAt,
            revokedAt: k.revokedAt,
          }));
          process.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
          return;
        }
        const rows = list.map((k) => [
          must(names.get(k.accountId), `account ${k.accountId}`),
          k.id,
          k.prefix,
          k.mode,
          k.tier,
          k.revokedAt ? `revoked ${k.revokedAt}` : 'active',
          k.createdAt,
          k.name ?? '',
        ]);
        process.stdout.write(
          table(['ACCOUNT', 'ID', 'PREFIX', 'MODE', 'TIER', 'STATUS', 'CREATED', 'NAME'], rows),
        );
        return;
      }
      case 'revoke': {
        const id = must(positionals[0], 'the key id');
        const key = await store.getKey(id);
        if (!key) cannot(`no key with id '${id}'`);
        if (key.revokedAt) {
          process.stderr.write(`Key ${id} was already revoked at ${key.revokedAt}.\n`);
          return;
        }
        await service.revoke(id);
        process.stderr.write(`Revoked ${id}.\n`);
        return;
      }
      case 'set-tier': {
        const [id, tier] = positionals as [string, TierId];
        if (!(await service.setTier(id, tier))) cannot(`no key with id '${id}'`);
        process.stderr.write(`Key ${id} is now on the ${tier} tier.\n`);
        return;
      }
      case 'move': {
        const id = must(positionals[0], 'the key id');
        const key = await store.getKey(id);
        if (!key) cannot(`no key with id '${id}'`);
        const accountName = str(values.account);
        const account =
          accountName === undefined ? await service.newAccount() : await service.ensureAccount(accountName);
        if (account.id === key.accountId) {
          process.stderr.write(`Key ${id} is already in account ${account.name}.\n`);
          return;
        }
        await service.move(id, account.id);
        process.stderr.write(`Key ${id} is now in account ${account.name}.\n`);
        return;
      }
    }
  }
}
