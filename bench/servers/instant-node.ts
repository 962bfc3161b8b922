/**
 * Child process: a JSON-RPC "node" that answers at once, so what a proxy in front of it costs is not
 * hidden behind the node's own work. Every call gets the same realistic answer (an `eth_chainId` result)
 * carrying the caller's id. Args: none.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { serve } from './serve.js';

const ID = /"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?|null)/;

await serve(async () => {
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const id = ID.exec(Buffer.concat(chunks).toString('latin1'))?.[1] ?? 'null';
      const body = `{"jsonrpc":"2.0","id":${id},"result":"0x7a69"}`;
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
