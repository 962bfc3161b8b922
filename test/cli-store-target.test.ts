/**
 * `tollgate keys`, `tollgate plans` and `tollgate usage` work for one gateway, named by its configuration (`--config` or
 * `TOLLGATE_CONFIG`) or `--demo`, never a guessed one: without them they refuse and create nothing,
 * whatever store flags are given; they say which store and configuration they used; and a managed key
 * (plan) never takes an id (name) that the gateway's configuration file gives one of its keys (plans).
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseCli } from '../examples/gateway/cli.js';
import { runStoreCommand } from '../examples/gateway/store-commands.js';
import { startRedisServer } from './helpers/redis-server.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

const main = new URL('../examples/gateway/main.ts', import.meta.url).pathname;
const dir = await mkdtemp(join(tmpdir(), 'tollgate-store-target-'));
t.teardown(() => rm(dir, { recursive: true, force: true }));
const redis = await startRedisServer();
t.teardown(() => redis.stop());

// The operator's file: one key of its own, `acme`, and the store in Redis.
const redisConfig = join(dir, 'gateway.yaml');
await writeFile(redisConfig, `plans:\n  metered: { dailyCredits: 1000, creditsPerSecond: 100, failover: false }\nkeys:\n  - { id: acme, key: acme-config-key-0001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: http://127.0.0.1:1\nplugins:\n  ledger-redis:\n    url: ${redis.url}\n`);
// The same keys with the store left to the default (SQLite at .data/tollgate.db, relative to where it runs).
const plainConfig = join(dir, 'plain.yaml');
await writeFile(plainConfig, 'keys:\n  - { id: acme, key: acme-config-key-0001, plan: growth }\nnetworks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: http://127.0.0.1:1\n');

const clean = { TOLLGATE_CONFIG: undefined, TOLLGATE_REDIS_URL: undefined, TOLLGATE_DATA_DIR: undefined };

/** Runs a store command in this process with its own environment. */
async function command(args: string[], env: Record<string, string | undefined> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runStoreCommand(parseCli(args), { out: (s) => void (stdout += s), err: (s) => void (stderr += s) }, { ...clean, ...env });
  return { code, stdout, stderr };
}

/** Runs the `tollgate` command as an operator would, in `cwd`. */
function run(args: string[], cwd: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const { TOLLGATE_CONFIG: _c, TOLLGATE_REDIS_URL: _r, TOLLGATE_DATA_DIR: _d, ...env } = process.env;
  // tsx by its own address: `--import tsx` would be looked up from `cwd`, a project without it.
  const nodeArgs = TSX_NODE_ARGS.map((arg) => (arg === 'tsx' ? import.meta.resolve('tsx') : arg));
  const child = spawn(process.execPath, [...nodeArgs, main, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c));
  child.stderr.on('data', (c: Buffer) => (stderr += c));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout, stderr })));
}

t.test("README's `keys create` without flags refuses and creates no store", async (t) => {
  const cwd = await mkdtemp(join(dir, 'project-'));
  const result = await run(['keys', 'create', '--plan', 'growth', '--label', 'Acme'], cwd);
  t.equal(result.code, 2, result.stderr);
  t.match(result.stderr, /tollgate keys: which gateway\?/);
  t.match(result.stderr, /--config <file>/, 'says how to name the gateway');
  t.match(result.stderr, /TOLLGATE_CONFIG/);
  t.match(result.stderr, /--demo/);
  t.equal(result.stdout, '', 'no key is printed');
  t.notOk(existsSync(join(cwd, '.data')), 'no demo store is created');
});

t.test('store flags or variables alone do not say which gateway: refused, in every combination', async (t) => {
  const cases: Array<[string[], Record<string, string>, RegExp]> = [
    [['--redis', redis.url], {}, /--redis says where the store is, not which keys/],
    [['--data-dir', dir], {}, /--data-dir says where the store is/],
    [['--redis', redis.url, '--data-dir', dir], {}, /--redis and --data-dir say where the store is/],
    [[], { TOLLGATE_REDIS_URL: redis.url }, /TOLLGATE_REDIS_URL says where the store is/],
    [[], { TOLLGATE_DATA_DIR: dir }, /TOLLGATE_DATA_DIR says where the store is/],
  ];
  for (const [flags, env, why] of cases) {
    const commands = [
      ['keys', 'create', '--plan', 'growth', '--id', 'acme'], ['keys', 'list'], ['usage', 'acme'],
      ['plans', 'list'], ['plans', 'create', 'scale', '--daily-credits', '10', '--credits-per-second', '10'], ['usage', 'export', '--from', '2026-11-01'],
    ];
    for (const args of commands) {
      const result = await command([...args, ...flags], env);
      const what = `${args.join(' ')} ${flags.join(' ')} ${Object.keys(env).join(' ')}`;
      t.equal(result.code, 2, `${what}: refused`);
      t.match(result.stderr, why, `${what}: says why`);
      t.match(result.stderr, /--config <file>/, `${what}: says what to pass`);
      t.equal(result.stdout, '', `${what}: did nothing`);
    }
  }
  t.equal((await command(['keys', 'list'])).code, 2, 'nothing at all: refused');
});

t.test("a managed key never takes an id of the gateway's file: --config, TOLLGATE_CONFIG, with and without --redis", async (t) => {
  const combinations: Array<[string, string[], Record<string, string>]> = [
    ['--config', ['--config', redisConfig], {}],
    ['--config and --redis', ['--config', redisConfig, '--redis', redis.url], {}],
    ['TOLLGATE_CONFIG', [], { TOLLGATE_CONFIG: redisConfig }],
    ['TOLLGATE_CONFIG and TOLLGATE_REDIS_URL', [], { TOLLGATE_CONFIG: redisConfig, TOLLGATE_REDIS_URL: redis.url }],
  ];
  for (const [what, flags, env] of combinations) {
    const refused = await command(['keys', 'create', '--plan', 'growth', '--id', 'acme', ...flags], env);
    t.equal(refused.code, 1, `${what}: refused`);
    t.match(refused.stderr, /a key of the config file already has id "acme"/, what);
    t.match(refused.stderr, `store: Redis at 127.0.0.1:${redis.port}; config: ${redisConfig}`, `${what}: names the store and the configuration`);
    t.equal(refused.stdout, '', `${what}: no key issued`);
  }
  const created = await command(['keys', 'create', '--plan', 'growth', '--id', 'globex', '--json'], { TOLLGATE_CONFIG: redisConfig });
  t.equal(created.code, 0, created.stderr);
  t.match(JSON.parse(created.stdout), { key: { id: 'globex', plan: 'growth' } });
  const listed = await command(['keys', 'list', '--config', redisConfig, '--json']);
  t.same((JSON.parse(listed.stdout) as { keys: Array<{ id: string; source: string }> }).keys.map((k) => [k.id, k.source]), [['acme', 'config'], ['globex', 'store']], "the file's key and the managed one, from the same store");
  const revoke = await command(['keys', 'revoke', 'acme', '--config', redisConfig]);
  t.equal(revoke.code, 1);
  t.match(revoke.stderr, /comes from the config file/);
});

t.test("a managed plan never takes a plan name of the gateway's file or the defaults, whatever the flags", async (t) => {
  const combinations: Array<[string, string[], Record<string, string>]> = [
    ['--config', ['--config', redisConfig], {}],
    ['--config and --redis', ['--config', redisConfig, '--redis', redis.url], {}],
    ['TOLLGATE_CONFIG and TOLLGATE_REDIS_URL', [], { TOLLGATE_CONFIG: redisConfig, TOLLGATE_REDIS_URL: redis.url }],
  ];
  for (const [what, flags, env] of combinations) {
    for (const name of ['growth', 'metered']) {
      const refused = await command(['plans', 'create', name, '--daily-credits', '10', '--credits-per-second', '10', ...flags], env);
      t.equal(refused.code, 1, `${what}: ${name} refused`);
      t.match(refused.stderr, `plan "${name}" comes from the config file (or the default plans)`, what);
      t.match(refused.stderr, `store: Redis at 127.0.0.1:${redis.port}; config: ${redisConfig}`, `${what}: names the store and the configuration`);
    }
  }
  const created = await command(['plans', 'create', 'scale', '--daily-credits', '10', '--credits-per-second', '10', '--json'], { TOLLGATE_CONFIG: redisConfig });
  t.equal(created.code, 0, created.stderr);
  const listed = await command(['plans', 'list', '--config', redisConfig, '--json']);
  const plans = (JSON.parse(listed.stdout) as { plans: Array<{ name: string; source: string }> }).plans;
  t.same(plans.filter((p) => p.name === 'metered' || p.name === 'scale').map((p) => [p.name, p.source]), [['metered', 'config'], ['scale', 'store']]);
  t.equal((await command(['plans', 'delete', 'scale', '--config', redisConfig])).code, 0);
});

t.test('--demo works on the demo store; with a configuration it is refused', async (t) => {
  const demoDir = await mkdtemp(join(dir, 'demo-'));
  const created = await command(['keys', 'create', '--plan', 'growth', '--id', 'tester', '--demo', '--data-dir', demoDir]);
  t.equal(created.code, 0, created.stderr);
  t.match(created.stderr, `store: SQLite ${join(demoDir, 'tollgate.db')}; config: the demo's (--demo)`);
  const listed = await command(['keys', 'list', '--demo', '--data-dir', demoDir]);
  t.match(listed.stdout, /^demo\s+growth\s+\(config file\)/m, "the demo configuration's key");
  t.match(listed.stdout, /^tester\s+growth/m);
  const both = await command(['keys', 'list', '--demo', '--config', redisConfig]);
  t.equal(both.code, 2);
  t.match(both.stderr, /--demo and --config name two different gateways/);
  const fromEnv = await command(['keys', 'list', '--demo'], { TOLLGATE_CONFIG: redisConfig });
  t.equal(fromEnv.code, 2);
  t.match(fromEnv.stderr, `--demo and TOLLGATE_CONFIG=${redisConfig} name two different gateways`);
});

t.test('a configuration whose SQLite store no gateway has opened is refused, not created', async (t) => {
  const cwd = await mkdtemp(join(dir, 'elsewhere-'));
  const result = await run(['keys', 'create', '--plan', 'growth', '--id', 'globex', '--config', plainConfig], cwd);
  t.equal(result.code, 1, result.stderr);
  t.match(result.stderr, /store: SQLite \.data\/tollgate\.db; config: /);
  t.match(result.stderr, /no store at \.data\/tollgate\.db, the default place: no gateway has opened it/);
  t.notOk(existsSync(join(cwd, '.data')), 'nothing created');
  const chosen = await command(['keys', 'create', '--plan', 'growth', '--id', 'globex', '--config', plainConfig, '--data-dir', cwd, '--json']);
  t.equal(chosen.code, 0, `a store the operator names is opened (created if need be): ${chosen.stderr}`);
});
