/**
 * The ceiling of any answer served from memory by a Node HTTP server: node:http in, the upstream's answer
 * to the bench's call (asked once, at start) written back for every request. It reads each request's body
 * and nothing more: no parsing, no key, no charge, no upstream hop. A gateway's cache hit does all of
 * those on top, so it can come close to this target's req/s but not beat it; set beside the bare proxy in
 * one run, it says how far above the proxy any answer from memory can go on the machine at hand.
 */
import { createServer } from 'node:http';
import { request } from 'undici';
import { listenBeside, type BareProxy } from './bare-proxy.js';

/** Options of {@link startStaticAnswer}. */
export interface StaticAnswerOptions {
  /** The upstream asked once for the answer. */
  readonly upstream: string;
  /** The JSON-RPC call whose answer is served. */
  readonly call: string;
}

/** Asks the upstream once, then answers every request with those bytes. */
export async function startStaticAnswer(options: StaticAnswerOptions): Promise<BareProxy> {
  const reply = await request(options.upstream, { method: 'POST', headers: { 'content-type': 'application/json' }, body: options.call });
  const answer = Buffer.from(await reply.body.arrayBuffer());
  if (reply.statusCode !== 200) throw new Error(`upstream answered ${reply.statusCode}: ${answer.toString('utf8')}`);
  const server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    req.on('data', () => {});
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': answer.length });
      res.end(answer);
    });
  });
  // No pool to keep: the upstream was asked once.
  return listenBeside(server, undefined, 0, '127.0.0.1');
}
