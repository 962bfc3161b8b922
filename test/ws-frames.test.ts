import t from 'tap';
import { WebSocket, type RawData } from 'ws';
import { devnet } from '@tollgate/devnet';
import { evmFamily } from '../plugins/evm/index.js';
import { wsTransport } from '../plugins/ws/index.js';
import { startTestGateway } from './helpers/gateway.js';

// A text frame must hold UTF-8 (RFC 6455 §5.6): an answer that is not UTF-8 travels in a binary frame.
const KEY = 'ws-frames-key-000001';
const dev = devnet({ seed: false });
const gw = await startTestGateway({
  keys: [{ key: KEY, plan: 'growth' }],
  networks: [{ name: 'eth', families: ['evm'], upstreams: [{ embedded: 'anvil' }] }],
}, [wsTransport(), evmFamily(), dev]);
t.teardown(() => gw.close());

t.test('an id that is not UTF-8 (sent in a binary frame) comes back in a binary frame; the connection lives on', async (t) => {
  const socket = new WebSocket(`${gw.origin.replace('http', 'ws')}/eth/ws/v3/${KEY}`, { perMessageDeflate: false });
  t.teardown(() => socket.terminate());
  const frames: Array<{ binary: boolean; data: Buffer }> = [];
  let closed: number | undefined;
  const waiters: Array<() => void> = [];
  const wake = (): void => { for (const w of waiters.splice(0)) w(); };
  socket.on('message', (data: RawData, binary: boolean) => { frames.push({ binary, data: data as Buffer }); wake(); });
  socket.on('close', (code) => { closed = code; wake(); });
  socket.on('error', () => {});
  const until = async (check: () => boolean): Promise<void> => { while (!check()) await new Promise<void>((resolve) => waiters.push(resolve)); };
  await new Promise((resolve, reject) => { socket.once('open', resolve); socket.once('error', reject); });

  // An ordinary call first: the connection is in use before the odd one comes.
  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId' }));
  await until(() => frames.length === 1 || closed !== undefined);
  frames.length = 0;
  const id = Buffer.from([0x22, 0x61, 0xff, 0x62, 0x22]); // "a\xffb"
  socket.send(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":'), id, Buffer.from(',"method":"eth_chainId"}')]), { binary: true });
  await until(() => frames.length === 1 || closed !== undefined);
  t.equal(closed, undefined, 'the client did not fail the connection (no 1007)');
  t.equal(frames[0]?.binary, true, 'the answer came in a binary frame');
  t.ok(frames[0]?.data.includes(id), 'with the id\'s bytes as sent');
  t.match(frames[0]?.data.toString('latin1'), /"result":"0x/, 'and the result');

  socket.send(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'eth_chainId', params: [] }));
  await until(() => frames.length === 2 || closed !== undefined);
  t.same(frames[1] === undefined ? undefined : { binary: frames[1].binary, id: (JSON.parse(String(frames[1].data)) as { id: number }).id }, { binary: false, id: 2 }, 'the next answer, UTF-8, in a text frame');
});
