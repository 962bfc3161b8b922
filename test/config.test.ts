import t from 'tap';
import { mkdtemp, writeFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveConfig, loadConfigFile, ConfigError } from '../core/index.js';
import { defaultPlans } from '../core/config/default-plans.js';

const minimal = { networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'http://127.0.0.1:8545' }] }] };

t.test('defaults are applied', async (t) => {
  const config = resolveConfig(minimal);
  t.equal(config.server.port, 8545);
  t.equal(config.server.maxBodyBytes, 1048576);
  t.equal(config.log.level, 'info');
  t.same(config.plans, defaultPlans);
  t.equal(config.plans.growth!.failover, true);
  t.equal(config.plans.custom!.failover, true);
  t.equal(config.plans.core!.failover, false);
  t.equal(config.upstreamDefaults.timeoutMs, 30000);
});

t.test('errors name the offending field', async (t) => {
  const cases: Array<[unknown, RegExp]> = [
    [{}, /networks: is required/],
    [{ ...minimal, server: { port: 'x' } }, /server\.port: must be integer/],
    [{ networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: 'ftp://x' }] }] }, /networks\[0\]\.upstreams\[0\]\.url: must match pattern/],
    [{ networks: [{ name: 'eth', families: ['evm'], upstreams: [{}] }] }, /networks\[0\]\.upstreams\[0\]\.(url|embedded): is required/],
    [{ ...minimal, keys: [{ key: 'abcdefgh12', plan: 'gold' }] }, /keys\[0\]\.plan: unknown plan "gold"/],
    [{ ...minimal, surprise: 1 }, /surprise: is not a known field/],
    [{ networks: [minimal.networks[0], minimal.networks[0]] }, /networks\[1\]\.name: duplicate "eth"/],
    [{ ...minimal, log: { level: 'loud' } }, /log\.level: must be one of fatal, error/],
  ];
  for (const [input, pattern] of cases) {
    t.throws(() => resolveConfig(input), pattern, JSON.stringify(input));
  }
  try {
    resolveConfig({ networks: [] });
  } catch (error) {
    t.ok(error instanceof ConfigError);
    t.match((error as ConfigError).problems, [/networks: must NOT have fewer than 1 items/]);
  }
});

t.test('JSON and YAML files load, and parse errors name the file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'tollgate-config-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'a.json'), JSON.stringify(minimal));
  await writeFile(join(dir, 'b.yaml'), 'networks:\n  - name: eth\n    families: [evm]\n    upstreams:\n      - url: http://127.0.0.1:8545\nserver:\n  port: 9000\n');
  await writeFile(join(dir, 'c.yaml'), 'networks: [\n');
  await writeFile(join(dir, 'd.yaml'), 'networks:\n  - name: eth\n    families: evm\n    upstreams: []\n');
  t.equal((await loadConfigFile(join(dir, 'a.json'))).networks[0]!.name, 'eth');
  t.equal((await loadConfigFile(join(dir, 'b.yaml'))).server.port, 9000);
  await t.rejects(loadConfigFile(join(dir, 'c.yaml')), /c\.yaml[\s\S]*cannot be parsed/);
  await t.rejects(loadConfigFile(join(dir, 'd.yaml')), /networks\[0\]\.families: must be array[\s\S]*networks\[0\]\.upstreams: must NOT have fewer than 1 items/);
});
