/**
 * A local stand-in for a serverless platform's HTTP front: it turns `POST /<network>/v3/<API_KEY>`
 * requests into events for `handler()` (worker.ts) and writes back what the handler returns. The
 * gateway itself has no transport and never sees HTTP.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { encodeError } from 'tollgate/transport';
import { Errors, type ErrorEntry } from 'tollgate';
import { handler } from './worker.js';
import { closeDemoGateway, demoGateway, DEMO_API_KEY } from './gateway.js';

const PORT = Number(process.env.PORT ?? 3000);
const HOST = '127.0.0.1';
const MAX_BODY_BYTES = 1024 * 1024;

function sendError(res: ServerResponse, entry: ErrorEntry, headers: Record<string, string> = {}): void {
  const body = encodeError(null, { code: entry.code, message: entry.message });
  res.writeHead(entry.httpStatus, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers });
  res.end(body);
}

/** The request body as text, or undefined once it grew past the limit. */
async function readBody(req: IncomingMessage): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const route = /^\/([^/]+)\/v3\/([^/]+)$/.exec(new URL(req.url ?? '/', 'http://front').pathname);
  if (route === null) return sendError(res, Errors.NOT_FOUND);
  if (req.method !== 'POST') return sendError(res, Errors.HTTP_METHOD_NOT_ALLOWED, { allow: 'POST' });
  const body = await readBody(req);
  if (body === undefined) return sendError(res, Errors.BODY_TOO_LARGE, { connection: 'close' });

  // The event a platform would hand the function: path parameters and the body as text.
  const result = await handler({ network: decodeURIComponent(route[1]!), apiKey: decodeURIComponent(route[2]!), body });
  res.writeHead(result.statusCode, { ...result.headers, 'content-length': Buffer.byteLength(result.body) });
  res.end(result.body);
}

// Start the gateway (and Anvil) before taking requests, as a platform's cold start would on the first one.
try {
  await demoGateway();
} catch (error) {
  console.error(`Tollgate did not start: ${(error as Error).message}`);
  process.exit(1);
}

const server = createServer((req, res) => {
  serve(req, res).catch((error: unknown) => {
    console.error(`request failed: ${(error as Error).message}`);
    if (res.headersSent) res.destroy();
    else sendError(res, Errors.INTERNAL_ERROR);
  });
});

try {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(PORT, HOST, () => { server.off('error', reject); resolve(); });
  });
} catch (error) {
  console.error(`Cannot listen on ${HOST}:${PORT}: ${(error as Error).message}`);
  await closeDemoGateway();
  process.exit(1);
}
const { port } = server.address() as AddressInfo;
console.log(`Listening on http://${HOST}:${port}`);
console.log(`  POST http://${HOST}:${port}/eth/v3/<API_KEY>   (JSON-RPC: single calls and batches)`);
console.log(`  API key: ${DEMO_API_KEY}`);

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  console.log(`${signal}: shutting down`);
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  // Calls in flight are answered first; a client holding a connection open gets 5 s.
  const force = setTimeout(() => server.closeAllConnections(), 5_000);
  await closed;
  clearTimeout(force);
  await closeDemoGateway();    // stops Anvil
  console.log('Stopped');
  process.exit(0);
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => {
    shutdown(signal).catch((error: unknown) => {
      console.error(`Shutdown failed: ${(error as Error).message}`);
      process.exit(1);
    });
  });
}
