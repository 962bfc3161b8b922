import type { Writable } from 'node:stream';
import type { GatewayConfig } from 'tollgate';
import type { KeyRegistry, CreditLedger, PlanRegistry, UsageRecorder, PinRecord, PinStore } from 'tollgate/store';
import { describePayment, KeyManager, KeyManagerError, listPayments, PlanManager, WALLET_PATTERN, type DayUsage, type IssuedKey, type KeyBalance, type KeyStorage, type KeyView, type PaymentLister, type PaymentView } from 'tollgate/plugins/admin';
import { SECURITY_SECTION } from 'tollgate/plugins/security';
import type { CliOptions } from './cli.js';
import { loadCliConfig, reportLoadFailure } from './cli-config.js';
import { storeKind } from './store-flags.js';
import { describeTarget, sqliteStoreProblem, storeTarget, type RedisStoreDescription } from './store-target.js';
import { plansUsageProblem, runPlans } from './plan-commands.js';
import { exportUsageProblem, runUsageExport } from './usage-export-command.js';

/** Where the command's output goes (stdout and stderr by default). */
export interface CommandOutput {
  /** Normal output. */
  out(text: string): void;
  /** Errors. */
  err(text: string): void;
  /** Where a long output (a usage export) is streamed. */
  readonly stream?: Writable;
}

const stdio: CommandOutput = {
  out: (text) => void process.stdout.write(text),
  err: (text) => void process.stderr.write(text),
  stream: process.stdout,
};

interface OpenStore {
  /** The payments plugin's journal in this store (loaded only when asked: it needs the x402 peers). */
  readonly payments: () => Promise<PaymentLister>;
  readonly registry: KeyRegistry;
  readonly plans: PlanRegistry;
  readonly ledger: CreditLedger;
  readonly usage: UsageRecorder;
  readonly pins: PinStore;
  close(): Promise<void> | void;
}

/** Opens the store the config selects; only that store's plugin (and driver) is loaded. */
async function openStore(config: GatewayConfig): Promise<OpenStore> {
  if (storeKind(config) === 'redis') {
    const { createRedisStore, RedisPinStore, LEDGER_REDIS_PLUGIN } = await import('tollgate/plugins/ledger-redis');
    const store = createRedisStore(config.plugins[LEDGER_REDIS_PLUGIN]);
    await store.open();
    const payments = async (): Promise<PaymentLister> => new (await import('tollgate/plugins/payments')).RedisPaymentJournal(store.connection);
    return { payments, registry: store.keys, plans: store.plans, ledger: store.ledger, usage: store.usage, pins: new RedisPinStore(store.connection), close: () => store.close() };
  }
  const { openSqliteStore, resolveSqliteSettings, SqlitePinStore, LEDGER_SQLITE_PLUGIN } = await import('tollgate/plugins/ledger-sqlite');
  const store = openSqliteStore(resolveSqliteSettings([config.plugins[LEDGER_SQLITE_PLUGIN]]));
  const payments = async (): Promise<PaymentLister> => new (await import('tollgate/plugins/payments')).SqlitePaymentJournal(store.db);
  return { payments, registry: store.keys, plans: store.plans, ledger: store.ledger, usage: store.usage, pins: new SqlitePinStore(store.db), close: () => store.close() };
}

function describePayments(title: string, payments: readonly PaymentView[]): string {
  if (payments.length === 0) return `${title}: no payments\n`;
  return `${title}: ${payments.length} payment${payments.length === 1 ? '' : 's'}, newest first\n${payments.map((p) => `  ${describePayment(p)}`).join('\n')}\n`;
}

function describeKey(key: KeyView): string {
  const state = key.revokedAt === undefined ? 'active' : `revoked ${key.revokedAt}`;
  const hint = key.source === 'config' ? '(config file)' : key.keyHint;
  return `${key.id.padEnd(24)} ${key.plan.padEnd(12)} ${hint.padEnd(14)} ${state}${key.label === undefined ? '' : `  ${key.label}`}`;
}

function describeIssued(issued: IssuedKey, verb: string): string {
  return [
    `${verb} key ${issued.key.id} on plan ${issued.key.plan}.`,
    '',
    `  API key: ${issued.apiKey}`,
    `  secret:  ${issued.secret}`,
    '',
    'Store them now: they are not shown again (only their hashes are kept).',
    '',
  ].join('\n');
}

/** Each plan's `storageBytes`, as the gateway applies it, when a network serves the file API (whose plugin is loaded only then). */
async function planStorageBytes(config: GatewayConfig): Promise<((plan: string) => number | undefined) | undefined> {
  if (!config.networks.some((network) => network.families.includes('ipfs'))) return undefined;
  return (await import('tollgate/plugins/ipfs')).planStorageBytes(config);
}

function describeStorage(id: string, storage: KeyStorage): string {
  const limit = storage.limitBytes === undefined ? '' : `, of ${storage.limitBytes} the plan allows`;
  return `${id}: ${storage.bytes} bytes pinned in ${storage.pins} pin${storage.pins === 1 ? '' : 's'}${limit}`;
}

function describePins(id: string, storage: KeyStorage, pins: readonly PinRecord[]): string {
  const lines = [describeStorage(id, storage)];
  for (const pin of pins) lines.push(`  ${pin.cid.padEnd(62)} ${String(pin.bytes).padStart(14)} bytes  ${new Date(pin.createdAt).toISOString()}${pin.name === undefined ? '' : `  ${pin.name}`}`);
  return `${lines.join('\n')}\n`;
}

function describeUsage(id: string, days: readonly DayUsage[], storage: KeyStorage, balance: KeyBalance): string {
  const lines: string[] = [];
  for (const day of days) {
    lines.push(`${id} on ${day.day}: ${day.total.calls} calls, ${day.total.credits} credits, ${day.total.failed} failed, ${day.total.bytes} bytes (balance used ${day.balanceUsed})`);
    for (const [method, t] of Object.entries(day.methods)) {
      lines.push(`  ${method.padEnd(40)} ${String(t.calls).padStart(9)} calls ${String(t.credits).padStart(12)} credits ${String(t.failed).padStart(7)} failed ${String(t.bytes).padStart(12)} bytes`);
    }
  }
  lines.push(describeBalance(id, balance));
  lines.push(describeStorage(id, storage));
  return `${lines.join('\n')}\n`;
}

function describeBalance(id: string, balance: KeyBalance): string {
  return `${id} today (${balance.day}): ${balance.remaining} of ${balance.dailyCredits} daily credits left, ${balance.paidRemaining} paid credits left`;
}

/**
 * Runs `keys ...`, `plans ...` or `usage ...` against the store the config selects (the same one the
 * gateway uses), prints the outcome and resolves with the exit code: 0 done, 1 refused (unknown key, bad
 * plan...), 2 bad usage.
 */
export async function runCommand(cli: CliOptions, config: GatewayConfig, io: CommandOutput = stdio): Promise<number> {
  const command = cli.command!;
  const [verb, ...rest] = command.args;
  const usage = (message: string): number => {
    io.err(`${message}\nsee tollgate --help\n`);
    return 2;
  };
  if (command.name === 'keys' && !['create', 'list', 'rotate', 'revoke', 'plan', 'security', 'pins', 'credits', 'payments'].includes(verb ?? '')) {
    return usage('keys: expected create, list, rotate <id>, revoke <id>, plan <id> <plan>, security <id> [<json>], pins <id>, credits <id> <credits> <reference> or payments <id>');
  }
  if (command.name === 'keys' && verb === 'credits' && (rest.length !== 3 || !/^[1-9]\d*$/.test(rest[1]!))) {
    return usage('keys credits: expected <id> <credits> <reference> (a positive whole number of credits; the reference makes a repeated top-up a no-op)');
  }
  if (command.name === 'keys' && verb === 'security' && (rest.length < 1 || rest.length > 2)) return usage('keys security: expected <id>, or <id> and the settings as JSON');
  let securitySettings: unknown;
  if (command.name === 'keys' && verb === 'security' && rest.length === 2) {
    try {
      securitySettings = JSON.parse(rest[1]!);
    } catch (error) {
      return usage(`keys security: the settings are not JSON (${(error as Error).message})`);
    }
  }
  if (command.name === 'keys' && verb === 'create' && cli.plan === undefined) return usage('keys create: --plan <plan> is required');
  if (command.name === 'keys' && (verb === 'rotate' || verb === 'revoke' || verb === 'pins' || verb === 'payments') && rest.length !== 1) return usage(`keys ${verb}: expected one key id`);
  if (command.name === 'payments' && (command.args.length !== 0 || cli.wallet === undefined)) return usage('payments: expected --wallet <0x...>');
  if (command.name === 'payments' && !WALLET_PATTERN.test(cli.wallet!)) return usage(`payments: --wallet "${cli.wallet}" is not an address (0x and 40 hex digits)`);
  if (command.name === 'keys' && verb === 'plan' && rest.length !== 2) return usage('keys plan: expected <id> <plan>');
  const exporting = command.name === 'usage' && command.args[0] === 'export';
  const problem = command.name === 'plans' ? plansUsageProblem(cli) : exporting ? exportUsageProblem(cli) : undefined;
  if (problem !== undefined) return usage(problem);
  if (command.name === 'usage' && command.args.length !== 1) return usage('usage: expected one key id, or export');

  // Read before the store opens: only the commands that show a key's storage load the file API's plugin.
  const showsStorage = (command.name === 'usage' && !exporting) || (command.name === 'keys' && verb === 'pins');
  let storageBytes: ((plan: string) => number | undefined) | undefined;
  try {
    storageBytes = showsStorage ? await planStorageBytes(config) : undefined;
  } catch (error) {
    // A bad `plugins.ipfs` section (which `start` refuses too), or the file API's driver not installed.
    io.err(`${(error as Error).message}\n`);
    return 1;
  }
  let store: OpenStore;
  try {
    store = await openStore(config);
  } catch (error) {
    io.err(`cannot open the store: ${(error as Error).message}\n`);
    return 1;
  }
  const manager = new KeyManager({
    config,
    registry: store.registry,
    plans: store.plans,
    ledger: store.ledger,
    usage: store.usage,
    pins: store.pins,
    now: () => Date.now(),
    sections: [SECURITY_SECTION],
    storageBytes,
  });
  const print = (value: unknown, text: string): void => io.out(cli.json ? `${JSON.stringify(value, null, 2)}\n` : text);
  try {
    if (command.name === 'payments' || (command.name === 'keys' && verb === 'payments')) {
      let journal: PaymentLister;
      try {
        journal = await store.payments();
      } catch (error) {
        // The payments plugin's peers (@x402/core, @x402/evm, viem) are not installed: no payments to list.
        io.err(`${(error as Error).message}\n`);
        return 1;
      }
      if (command.name === 'payments') {
        const payments = await listPayments(journal, { payer: cli.wallet!, limit: 1_000 });
        print({ wallet: cli.wallet, payments }, describePayments(`wallet ${cli.wallet}`, payments));
      } else {
        const id = rest[0]!;
        await manager.get(id);
        const payments = await listPayments(journal, { keyId: id, limit: 1_000 });
        print({ id, payments }, describePayments(`key ${id}`, payments));
      }
    } else if (command.name === 'plans') {
      await runPlans(cli, new PlanManager({ config, plans: store.plans, keys: store.registry, now: () => Date.now() }), { print });
    } else if (exporting) {
      const written = await runUsageExport(cli, { config, registry: store.registry, usage: store.usage, now: () => Date.now() }, io.stream);
      io.err(`${written}\n`);
    } else if (command.name === 'usage') {
      const id = command.args[0]!;
      const range = cli.day !== undefined ? { from: cli.day, to: cli.day } : { from: cli.from, to: cli.to };
      const days = await manager.usage(id, range);
      const storage = await manager.storage(id);
      const balance = await manager.balance(id);
      print({ id, days, storage, balance }, describeUsage(id, days, storage, balance));
    } else if (verb === 'create') {
      const issued = await manager.create({ plan: cli.plan!, id: cli.id, label: cli.label });
      print(issued, describeIssued(issued, 'Created'));
    } else if (verb === 'list') {
      const keys = await manager.list();
      print({ keys }, `${keys.map(describeKey).join('\n')}\n`);
    } else if (verb === 'rotate') {
      const issued = await manager.rotate(rest[0]!);
      print(issued, describeIssued(issued, 'Rotated'));
    } else if (verb === 'security') {
      const id = rest[0]!;
      if (rest.length === 1) {
        const value = (await manager.settingsSection(id, SECURITY_SECTION.name)) ?? {};
        print({ id, security: value }, `${JSON.stringify(value, null, 2)}\n`);
      } else {
        const empty = typeof securitySettings === 'object' && securitySettings !== null && !Array.isArray(securitySettings) && Object.keys(securitySettings).length === 0;
        const key = await manager.setSettingsSection(id, SECURITY_SECTION.name, empty ? undefined : securitySettings);
        print({ key }, empty ? `Key ${key.id} has no security settings from its next call on.\n` : `Key ${key.id}'s security settings apply from its next call on.\n`);
      }
    } else if (verb === 'pins') {
      const id = rest[0]!;
      const pins = await manager.pins(id);
      const storage = await manager.storage(id);
      print({ id, storage, pins }, describePins(id, storage, pins));
    } else if (verb === 'credits') {
      const id = rest[0]!;
      const topUp = await manager.topUp(id, Number(rest[1]), rest[2]!);
      print({ id, ...topUp }, `${topUp.applied ? `Added ${rest[1]} paid credits to ${id}` : `Top-up "${rest[2]}" was applied to ${id} before: nothing changed`}.\n${describeBalance(id, topUp.balance)}\n`);
    } else if (verb === 'revoke') {
      const key = await manager.revoke(rest[0]!);
      print({ key }, `Revoked key ${key.id}: it is refused from its next call on.\n`);
    } else {
      const key = await manager.update(rest[0]!, { plan: rest[1]! });
      print({ key }, `Key ${key.id} is on plan ${key.plan} from its next call on.\n`);
    }
    return 0;
  } catch (error) {
    if (!(error instanceof KeyManagerError)) throw error;
    io.err(`${error.message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

/**
 * `tollgate keys ...`, `tollgate plans ...` and `tollgate usage ...`: decides which gateway they work for (its `--config` or
 * `TOLLGATE_CONFIG`, or `--demo`; never a guess), loads its configuration as the gateway would, prints
 * the store and configuration used (on stderr, so that `--json` output stays clean), then runs.
 */
export async function runStoreCommand(cli: CliOptions, io: CommandOutput = stdio, env: Readonly<Record<string, string | undefined>> = process.env): Promise<number> {
  const target = storeTarget(cli, env);
  if (!target.ok) {
    io.err(`${target.problem}\n`);
    return 2;
  }
  let config: GatewayConfig;
  try {
    config = await loadCliConfig(cli, env, target.file === undefined);
  } catch (error) {
    io.err(reportLoadFailure(error, target.file));
    return 1;
  }
  const describeRedis: RedisStoreDescription = storeKind(config) === 'redis' ? (await import('tollgate/plugins/ledger-redis')).storeDescription : () => 'Redis';
  io.err(`${describeTarget(config, target.file, describeRedis)}\n`);
  const problem = sqliteStoreProblem(config);
  if (problem !== undefined) {
    io.err(`tollgate ${cli.command?.name ?? 'keys'}: ${problem}\n`);
    return 1;
  }
  return runCommand(cli, config, io);
}
