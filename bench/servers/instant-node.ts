/**
 * Child process: a JSON-RPC "node" that answers at once, so what a proxy in front of it costs is not
 * hidden behind the node's own work. Each call gets a realistic answer for its method (see
 * `instant-answers.ts`: a block, a receipt, logs, a token balance, a Solana account) carrying the
 * caller's id. Args: none.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from './serve.js';
import { instantResult } from './instant-answers.js';

const ID = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|null)/;
const METHOD = /"method"\s*:\s*"([^"]+)"/;

await serve(async () => {
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const text = Buffer.concat(chunks).toString('latin1');
      const id = ID.exec(text)?.[1] ?? 'null';
      const body = `{"jsonrpc":"2.0","id":${id},"result":${instantResult(METHOD.exec(text)?.[1])}}`;
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    pids: [process.pid],
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
});
