import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A minimal JSON-RPC node on a real loopback socket, for tests of the gateway's own behaviour (ledgers,
 * faults, lifecycle) where the node's answers do not matter: answers every call, single or batch, with
 * `result: "0x1…"` after `delayMs`, and counts the calls it holds and has answered.
 */
export interface TinyUpstream {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Calls held right now (batch items count one each). */
  readonly current: () => number;
  /** Most calls held at once so far. */
  readonly peak: () => number;
  /** Calls answered so far. */
  readonly answered: () => number;
  close(): Promise<void>;
}

/** How a {@link TinyUpstream} answers. */
export interface TinyUpstreamOptions {
  /** How long each answer is held; 0 (the default) answers at once. */
  readonly delayMs?: number;
  /** Hex digits in each result, to make answers larger (default 1). */
  readonly padBytes?: number;
}

/** Starts a {@link TinyUpstream} on a free port. */
export async function startTinyUpstream(options: TinyUpstreamOptions = {}): Promise<TinyUpstream> {
  const delayMs = options.delayMs ?? 0;
  const result = `0x${'1'.repeat(Math.max(1, options.padBytes ?? 1))}`;
  let current = 0;
  let peak = 0;
  let answered = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: unknown;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        res.writeHead(400).end();
        return;
      }
      const calls = (Array.isArray(body) ? body : [body]) as Array<{ id?: unknown }>;
      current += calls.length;
      peak = Math.max(peak, current);
      let held = true;
      const release = (): void => {
        if (!held) return;
        held = false;
        current -= calls.length;
      };
      const answer = (): void => {
        release();
        answered += calls.length;
        const answers = calls.map((c) => ({ jsonrpc: '2.0', id: c.id ?? null, result }));
        const reply = JSON.stringify(Array.isArray(body) ? answers : answers[0]);
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(reply) }).end(reply);
      };
      if (delayMs === 0) return answer();
      const timer = setTimeout(answer, delayMs);
      res.on('close', () => {
        clearTimeout(timer);
        release();
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    current: () => current,
    peak: () => peak,
    answered: () => answered,
    close: () => new Promise<void>((resolve) => { server.close(() => resolve()); server.closeAllConnections(); }),
  };
}
