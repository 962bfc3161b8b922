import t from 'tap';
import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGateway, PluginError, type GatewayConfigInput, type TollgatePlugin } from 'tollgate';
import { Tokens } from 'tollgate/plugin';
import type { EmbeddedUpstreamProvider } from 'tollgate/upstream';
import { httpTransport } from 'tollgate/plugins/http';
import { ledgerSqlite } from 'tollgate/plugins/ledger-sqlite';
import { startTinyUpstream } from '../helpers/tiny-upstream.js';

// The plugin lifecycle through the public API: register (bindings only), start, stop. When anything
// fails while the gateway starts, what had started is stopped in reverse order and createGateway
// rejects with a coded PluginError; nothing is left listening or open.
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const family = { name: 'tiny', methods: [{ name: 'tiny_ping', credits: 1, params: { type: 'array' } }] };
const config = (extra: Partial<GatewayConfigInput> = {}): GatewayConfigInput => ({
  log: { level: 'silent' },
  networks: [{ name: 't', families: ['tiny'], upstreams: [{ url: upstream.url }] }],
  ...extra,
});
const familyPlugin: TollgatePlugin = { name: 'tiny', register: (c) => c.register(Tokens.Family, { useValue: family }) };

/** A plugin that opens a real socket in start and closes it in stop, logging both in `journal`. */
function listening(name: string, journal: string[]): TollgatePlugin & { port(): number } {
  let server: Server | undefined;
  let port = 0;
  return {
    name,
    port: () => port,
    register: () => { journal.push(`${name}:register`); },
    async start() {
      server = createServer();
      await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
      journal.push(`${name}:start`);
    },
    async stop() {
      await new Promise<void>((resolve) => server!.close(() => resolve()));
      journal.push(`${name}:stop`);
    },
  };
}
const failing = (journal: string[]): TollgatePlugin => ({
  name: 'failing',
  register: () => { journal.push('failing:register'); },
  async start() { journal.push('failing:start'); throw new Error('disk on fire'); },
  async stop() { journal.push('failing:stop'); },
});
const refuses = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(true));
  });

t.test('a plugin whose start fails: the started ones stop in reverse, a coded error, nothing listening', async (t) => {
  const journal: string[] = [];
  const first = listening('first', journal);
  const second = listening('second', journal);
  const error = await createGateway({ config: config(), plugins: [familyPlugin, first, second, failing(journal), httpTransport()] }).then(() => undefined, (e: unknown) => e);
  t.ok(error instanceof PluginError, 'a PluginError');
  t.match(error, { code: 'PLUGIN_START_FAILED', plugin: 'failing', message: 'plugin "failing" failed to start: disk on fire' });
  t.same(journal, ['first:register', 'second:register', 'failing:register', 'first:start', 'second:start', 'failing:start', 'second:stop', 'first:stop']);
  t.ok(await refuses(first.port()), 'the first plugin\'s socket is closed');
  t.ok(await refuses(second.port()), 'the second plugin\'s socket is closed');
});

t.test('register does no I/O: a registration failure stops before any start', async (t) => {
  const journal: string[] = [];
  const badStage: TollgatePlugin = {
    name: 'bad-stage',
    register: (c) => c.register(Tokens.Stage, { useValue: { name: 'lost', after: 'nowhere', create: () => (s) => s } }),
  };
  const error = await createGateway({ config: config(), plugins: [familyPlugin, listening('first', journal), badStage] }).then(() => undefined, (e: unknown) => e);
  t.match(error, { name: 'PluginError', code: 'PLUGIN_CONFLICT', message: /anchored to unknown stage "nowhere"/ });
  t.same(journal, ['first:register'], 'no plugin was started');
});

t.test('the SQLite file opens in start and is closed again when a later plugin fails', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-lifecycle-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const journal: string[] = [];
  const sqlite = ledgerSqlite({ path: join(dir, 'ledger.db') });
  t.throws(() => sqlite.store, /not started/, 'nothing is open before start');
  const error = await createGateway({ config: config(), plugins: [familyPlugin, sqlite, failing(journal)] }).then(() => undefined, (e: unknown) => e);
  t.match(error, { code: 'PLUGIN_START_FAILED' });
  t.equal(sqlite.store.db.open, false, 'the database was closed again');
});

t.test('an embedded upstream that fails to start: the ones that started and every plugin are stopped', async (t) => {
  const journal: string[] = [];
  const provider: EmbeddedUpstreamProvider = {
    kind: 'flaky',
    async start(instance) {
      if (instance === 'broken') throw new Error('no such chain');
      const node = await startTinyUpstream();
      journal.push(`node ${instance}:start`);
      return { url: node.url, stop: async () => { await node.close(); journal.push(`node ${instance}:stop`); } };
    },
  };
  const embedded: TollgatePlugin = { name: 'flaky-nodes', register: (c) => c.register(Tokens.EmbeddedUpstream, { useValue: provider }) };
  const first = listening('first', journal);
  const error = await createGateway({
    config: config({
      networks: [
        { name: 'ok', families: ['tiny'], upstreams: [{ embedded: 'flaky#good' }] },
        { name: 'bad', families: ['tiny'], upstreams: [{ embedded: 'flaky#broken' }] },
      ],
    }),
    plugins: [familyPlugin, embedded, first],
  }).then(() => undefined, (e: unknown) => e);
  t.match(error, { name: 'PluginError', code: 'PLUGIN_START_FAILED', message: /no such chain/ });
  t.same(journal.filter((e) => e.startsWith('node')), ['node good:start', 'node good:stop'], 'the started node was stopped');
  t.equal(journal.at(-1), 'first:stop', 'plugins stop last, after the upstreams');
  t.ok(await refuses(first.port()));
});

t.test('a started gateway stops everything on close, in reverse order', async (t) => {
  const journal: string[] = [];
  const gateway = await createGateway({ config: config(), plugins: [familyPlugin, listening('first', journal), listening('second', journal)] });
  t.same(journal, ['first:register', 'second:register', 'first:start', 'second:start']);
  await gateway.close();
  t.same(journal.slice(4), ['second:stop', 'first:stop']);
});
