/**
 * Bodies over the limit, from clients that keep writing without reading: the refusal (413, Connection:
 * close) must reach them instead of a reset. `Expect: 100-continue` with a declared length over the limit
 * is refused before `100 Continue`. The JSON-RPC and admin APIs behave the same.
 */
import t from 'tap';
import { connect } from 'node:net';
import { httpTransport } from '../../plugins/http/index.js';
import { evmFamily } from '../../plugins/evm/index.js';
import { ledgerSqlite } from '../../plugins/ledger-sqlite/index.js';
import { admin } from '../../plugins/admin/index.js';
import { startTestGateway } from '../helpers/gateway.js';
import { startTinyUpstream } from '../helpers/tiny-upstream.js';
import { report } from './helpers.js';

const TOKEN = 'admin-token-for-oversized-bodies-01';
const KEY = 'oversized-body-key-0001';
const LIMIT = 64 * 1024;
const upstream = await startTinyUpstream();
t.teardown(() => upstream.close());
const gw = await startTestGateway(
  {
    server: { maxBodyBytes: LIMIT },
    keys: [{ key: KEY, plan: 'growth' }],
    networks: [{ name: 'eth', families: ['evm'], upstreams: [{ url: upstream.url }] }],
    plugins: { admin: { token: TOKEN, maxBodyBytes: LIMIT } },
  },
  [ledgerSqlite({ path: ':memory:' }), admin(), httpTransport(), evmFamily()],
);
t.teardown(() => gw.close());
const port = Number(new URL(gw.origin).port);

/** What a raw client saw: everything it read, and the first socket error, if any. */
interface Exchange {
  readonly text: string;
  readonly error: string | undefined;
}

/**
 * Writes `head` and then `bodyBytes` of body (in one go, without reading in between unless `waitForContinue`),
 * and reads until the server closes.
 */
function exchange(head: string, bodyBytes: number, options: { waitForContinue?: boolean } = {}): Promise<Exchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let text = '';
    let error: string | undefined;
    let sentBody = false;
    const sendBody = (): void => {
      if (sentBody) return;
      sentBody = true;
      if (bodyBytes > 0) socket.write(Buffer.alloc(bodyBytes, 0x20));
    };
    socket.on('data', (chunk: Buffer) => {
      text += chunk.toString('latin1');
      if (options.waitForContinue === true && text.startsWith('HTTP/1.1 100')) sendBody();
    });
    socket.on('error', (e: NodeJS.ErrnoException) => (error ??= e.code ?? e.message));
    socket.on('close', () => resolve({ text, error }));
    socket.write(head);
    if (options.waitForContinue !== true) sendBody();
  });
}

function post(path: string, headers: Record<string, string>): string {
  return `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n${Object.entries(headers).map(([k, v]) => `${k}: ${v}\r\n`).join('')}\r\n`;
}

const SIX_MB = 6 * 1024 * 1024;
const targets: Array<{ api: string; path: string; headers: Record<string, string> }> = [
  { api: 'JSON-RPC', path: `/eth/v3/${KEY}`, headers: { 'content-type': 'application/json' } },
  { api: 'admin', path: '/admin/v1/keys', headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` } },
];

for (const { api, path, headers } of targets) {
  t.test(`${api}: 6 MB bodies written without reading get a readable 413 with Connection: close`, async (t) => {
    const ROUNDS = 12;
    const declared = await Promise.all(Array.from({ length: ROUNDS }, () => exchange(post(path, { ...headers, 'content-length': String(SIX_MB) }), SIX_MB)));
    const readable = declared.filter((x) => x.error === undefined && /^HTTP\/1\.1 413 /.test(x.text) && /\r\nconnection: close\r\n/i.test(x.text)).length;
    report(`${api} oversized bodies`, { rounds: ROUNDS, readable413: readable, errors: declared.filter((x) => x.error !== undefined).length });
    t.equal(readable, ROUNDS, 'every client read the 413 (no EPIPE or reset)');
  });

  t.test(`${api}: a body that grows past the limit without a declared length gets a readable 413`, async (t) => {
    // Chunked: one 6 MB chunk, then the terminating chunk.
    const head = post(path, { ...headers, 'transfer-encoding': 'chunked' });
    const body = `${SIX_MB.toString(16)}\r\n${' '.repeat(SIX_MB)}\r\n0\r\n\r\n`;
    const seen = await exchange(head + body, 0);
    t.equal(seen.error, undefined, 'no socket error');
    t.match(seen.text, /^HTTP\/1\.1 413 /, '413');
    t.match(seen.text, /\r\nconnection: close\r\n/i, 'Connection: close');
  });

  t.test(`${api}: Expect: 100-continue over the limit is refused before 100 Continue; under it, continued`, async (t) => {
    const over = await exchange(post(path, { ...headers, 'content-length': String(SIX_MB), expect: '100-continue' }), SIX_MB, { waitForContinue: true });
    t.match(over.text, /^HTTP\/1\.1 413 /, 'the first answer is the 413');
    t.notMatch(over.text, /100 Continue/, 'no 100 Continue was sent');
    const small = '{"jsonrpc":"2.0","id":1,"method":"eth_blockNumber","params":[]}';
    const under = await new Promise<string>((resolve) => {
      const socket = connect(port, '127.0.0.1');
      let text = '';
      socket.on('data', (chunk: Buffer) => {
        text += chunk.toString('latin1');
        if (text.startsWith('HTTP/1.1 100') && !text.includes('\r\n\r\nHTTP/1.1')) socket.write(small);
        if (/\r\n\r\nHTTP\/1\.1 \d{3} [\s\S]*\r\n\r\n/.test(text)) socket.end();
      });
      socket.on('close', () => resolve(text));
      socket.write(post(path, { ...headers, 'content-length': String(Buffer.byteLength(small)), expect: '100-continue' }));
    });
    t.match(under, /^HTTP\/1\.1 100 Continue\r\n\r\nHTTP\/1\.1 (200|201|400) /, 'a body under the limit is asked for, then answered');
  });
}
