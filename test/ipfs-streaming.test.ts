import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { relay } from '../plugins/ipfs/relay.js';
import { basic, startIpfsGateway } from './helpers/ipfs-gateway.js';
import { CAT_HEADERS, patternDigest, startKuboStub, writePattern } from './helpers/kubo-stub.js';
import { TSX_NODE_ARGS } from './helpers/tsx-node-args.js';

// Streaming end to end: an error after the answer began reaches the client in the X-Stream-Error trailer,
// a client that goes away ends the upstream request, backpressure holds, and a large cat keeps the
// gateway's memory flat.

const HELLO = 'QmT78zSuBmuS4z925WZfrqQ1qHaJ56DQaTfyMUF7F8ff5o';

async function until(what: string, check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

t.test('an upstream that fails mid-stream: 200, the bytes so far, and the X-Stream-Error trailer', async (t) => {
  const sent = 300_000;
  const stub = await startKuboStub((req, res) => {
    req.resume();
    res.writeHead(200, CAT_HEADERS);
    res.write(Buffer.alloc(sent, 0x61), () => setTimeout(() => res.socket?.destroy(), 20));
  });
  const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
  t.teardown(async () => {
    await gw.close();
    await stub.close();
  });
  const res = await request(`${gw.api}/cat?arg=${HELLO}`, { method: 'POST', headers: { authorization: gw.auth } });
  t.equal(res.statusCode, 200, 'the status was sent before the failure');
  t.equal(res.headers.trailer, 'X-Stream-Error');
  const body = Buffer.from(await res.body.arrayBuffer());
  t.equal(body.length, sent, 'every byte the upstream sent');
  t.match(res.trailers['x-stream-error'], /\S/, 'the error is in the trailer');
  t.equal(stub.requests[0], `/api/v0/cat?arg=${HELLO}`, 'the client\'s query went upstream as sent');
});

t.test('an X-Stream-Error trailer the upstream sent is passed on with the bytes', async (t) => {
  const server = createServer((req, res) => {
    req.resume();
    res.writeHead(200, { trailer: 'X-Stream-Error' });
    void relay(Readable.from([Buffer.from('partial '), Buffer.from('answer')]), res, () => ({ 'x-stream-error': 'context canceled' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const res = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`, { method: 'POST' });
  t.equal(await res.body.text(), 'partial answer');
  t.equal(res.trailers['x-stream-error'], 'context canceled');
});

t.test("a real upstream's own X-Stream-Error trailer reaches the client through the gateway", async (t) => {
  const stub = await startKuboStub((req, res) => {
    req.resume();
    res.writeHead(200, CAT_HEADERS);
    res.write('partial ');
    res.addTrailers({ 'X-Stream-Error': 'context deadline exceeded' });
    res.end('answer');
  });
  const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
  t.teardown(async () => {
    await gw.close();
    await stub.close();
  });
  const res = await request(`${gw.api}/cat?arg=${HELLO}`, { method: 'POST', headers: { authorization: gw.auth } });
  t.equal(res.statusCode, 200);
  t.equal(await res.body.text(), 'partial answer', 'the bytes the node sent');
  t.equal(res.trailers['x-stream-error'], 'context deadline exceeded', "the node's own error, passed on");
});

t.test('a client that goes away ends the upstream request', async (t) => {
  let upstreamClosed = false;
  let upstreamWritten = 0;
  const stub = await startKuboStub((req, res) => {
    req.resume();
    res.writeHead(200, CAT_HEADERS);
    void writePattern(res, 1 << 20, (written) => (upstreamWritten = written)).then((outcome) => {
      upstreamClosed = outcome.closed;
    });
  });
  const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
  t.teardown(async () => {
    await gw.close();
    await stub.close();
  });
  const res = await request(`${gw.api}/cat?arg=${HELLO}`, { method: 'POST', headers: { authorization: gw.auth } });
  let read = 0;
  for await (const chunk of res.body) {
    read += (chunk as Buffer).length;
    if (read >= 1 << 20) break; // leaving the loop destroys the body: the client is gone
  }
  await until('the upstream to see its request end', () => upstreamClosed);
  t.ok(upstreamClosed, 'the upstream response was closed before it finished');
  t.ok(upstreamWritten < 64 << 20, `the upstream stopped early (${(upstreamWritten / 2 ** 20).toFixed(1)} MiB of 64 GiB)`);
});

t.test('backpressure: a client that does not read holds the upstream back', async (t) => {
  let upstreamWritten = 0;
  let upstreamClosed = false;
  const stub = await startKuboStub((req, res) => {
    req.resume();
    res.writeHead(200, CAT_HEADERS);
    void writePattern(res, 1 << 20, (written) => (upstreamWritten = written)).then((outcome) => (upstreamClosed = outcome.closed));
  });
  const gw = await startIpfsGateway({ upstreams: [{ url: stub.url }] });
  t.teardown(async () => {
    await gw.close();
    await stub.close();
  });
  const res = await request(`${gw.api}/cat?arg=${HELLO}`, { method: 'POST', headers: { authorization: gw.auth }, highWaterMark: 65_536 } as Parameters<typeof request>[1]);
  // Read nothing for a while: the upstream fills the socket buffers on its way and must then wait.
  let last = -1;
  for (let i = 0; i < 100 && upstreamWritten !== last; i++) {
    last = upstreamWritten;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  t.ok(upstreamWritten < 48 << 20, `the upstream is held back (${(upstreamWritten / 2 ** 20).toFixed(1)} MiB written while the client read nothing)`);
  res.body.destroy();
  await until('the upstream to see its request end', () => upstreamClosed);
});

t.test('a large cat streams through a gateway process whose memory stays flat', async (t) => {
  const chunks = 4096; // 256 MiB of 64 KiB chunks
  const stub = await startKuboStub((req, res) => {
    req.resume();
    const count = /[?&]length=(\d+)/.exec(req.url ?? '')?.[1];
    const total = count === undefined ? chunks : Number(count) / 65_536;
    res.writeHead(200, { ...CAT_HEADERS, 'x-content-length': String(total * 65_536) });
    void writePattern(res, total).then(() => res.end());
  });
  t.teardown(() => stub.close());
  const child = spawn(process.execPath, [...TSX_NODE_ARGS, fileURLToPath(new URL('./helpers/ipfs-gateway-child.ts', import.meta.url)), stub.url], { stdio: ['pipe', 'pipe', 'inherit'] });
  const killChild = (): void => void child.kill('SIGKILL');
  process.once('exit', killChild);
  t.teardown(async () => {
    process.off('exit', killChild);
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.stdin!.end();
      child.kill('SIGTERM');
      await exited;
    }
  });
  const port = await new Promise<number>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      const match = /^READY (\d+)$/.exec(line);
      if (match !== null) resolve(Number(match[1]));
    });
    child.once('exit', (code) => reject(new Error(`the gateway process exited (${code})`)));
  });
  const url = `http://127.0.0.1:${port}/ipfs/api/v0/cat?arg=${HELLO}`;
  const headers = { authorization: basic('ipfs-child-key-0001', 'ipfs-child-secret') };
  const rssOf = (field: 'VmRSS' | 'VmHWM'): number => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))?.[1] ?? NaN) * 1024;
  const cat = async (length?: number): Promise<{ digest: string; bytes: number }> => {
    const res = await request(length === undefined ? url : `${url}&length=${length}`, { method: 'POST', headers });
    t.equal(res.statusCode, 200);
    const hash = createHash('sha256');
    let bytes = 0;
    for await (const chunk of res.body) {
      hash.update(chunk as Buffer);
      bytes += (chunk as Buffer).length;
    }
    return { digest: hash.digest('hex'), bytes };
  };

  // Warm up (JIT, pools, buffers), then measure from a settled baseline.
  for (let i = 0; i < 3; i++) await cat(512 * 65_536);
  const baseline = rssOf('VmRSS');
  let resetPeak = true;
  try {
    writeFileSync(`/proc/${child.pid}/clear_refs`, '5');
  } catch {
    resetPeak = false; // no peak reset here: sampling alone decides
  }
  let sampledPeak = baseline;
  const sampler = setInterval(() => {
    try {
      sampledPeak = Math.max(sampledPeak, rssOf('VmRSS'));
    } catch { /* the process is gone */ }
  }, 25);
  const started = performance.now();
  const { digest, bytes } = await cat();
  clearInterval(sampler);
  const seconds = (performance.now() - started) / 1000;
  const peak = Math.max(sampledPeak, resetPeak ? rssOf('VmHWM') : 0);
  t.equal(bytes, chunks * 65_536, '256 MiB arrived');
  t.equal(digest, patternDigest(chunks), 'byte for byte');
  const growth = (peak - baseline) / 2 ** 20;
  t.comment(`256 MiB in ${seconds.toFixed(1)} s (${(256 / seconds).toFixed(0)} MiB/s); gateway RSS ${(baseline / 2 ** 20).toFixed(0)} MiB at rest, peak growth ${growth.toFixed(1)} MiB`);
  t.ok(growth <= 48, `the gateway's peak RSS grew by ${growth.toFixed(1)} MiB (at most 48 MiB for 256 MiB streamed)`);
});
