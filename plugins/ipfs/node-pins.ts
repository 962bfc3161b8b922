import type { UpstreamSender } from '../../core/upstream-api.js';
import type { RequestContext, UpstreamReply } from '../../core/plugin-api.js';
import { kuboErrorReply } from './kubo-errors.js';

/** What the node said to one of the gateway's own requests: its JSON answer, or its error reply to relay. */
export type NodeOutcome<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly reply: UpstreamReply };

function lastJsonLine(body: Uint8Array): unknown {
  const lines = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8').split('\n').filter((l) => l.trim() !== '');
  return JSON.parse(lines[lines.length - 1] ?? 'null');
}

/**
 * The node requests behind the pin commands, sent through the call's route (`createUpstreamSender`), so
 * they meet the same selector, breakers and failover as the call's own: weigh a DAG, list what it links,
 * pin, unpin, move a pin.
 * A node's error answer (kubo's JSON error, a 4xx) comes back as the reply to relay to the client.
 */
export class NodePinRequests {
  readonly #send: UpstreamSender;

  constructor(send: UpstreamSender) {
    this.#send = send;
  }

  async #json<T>(ctx: RequestContext, command: string, query: URLSearchParams, timeoutMs?: number): Promise<NodeOutcome<T>> {
    const { reply, upstream } = await this.#send(ctx, { path: `/api/v0/${command}?${query.toString()}`, stream: false, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
    ctx.servedBy = upstream;
    if (reply.status !== 200) return { ok: false, reply };
    return { ok: true, value: lastJsonLine(reply.body as Uint8Array) as T };
  }

  /** The bytes of the DAG under `cid` (`dag/stat`: kubo's `TotalSize`, or `Size` before kubo 0.21). */
  async dagBytes(ctx: RequestContext, cid: string): Promise<NodeOutcome<number>> {
    const stat = await this.#json<{ TotalSize?: number; Size?: number }>(ctx, 'dag/stat', new URLSearchParams([['arg', cid], ['progress', 'false']]));
    if (!stat.ok) return stat;
    return { ok: true, value: Number(stat.value.TotalSize ?? stat.value.Size ?? 0) };
  }

  /**
   * Every CID the DAG under `cid` links, once, the root left out (kubo's `refs` with `recursive` and
   * `unique`): what a recursive pin of `cid` pins indirectly. An `Err` line of the node fails it.
   */
  async refs(ctx: RequestContext, cid: string): Promise<NodeOutcome<string[]>> {
    const query = new URLSearchParams([['arg', cid], ['recursive', 'true'], ['unique', 'true']]);
    const { reply, upstream } = await this.#send(ctx, { path: `/api/v0/refs?${query.toString()}`, stream: false });
    ctx.servedBy = upstream;
    if (reply.status !== 200) return { ok: false, reply };
    const body = reply.body as Uint8Array;
    const refs: string[] = [];
    for (const line of Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8').split('\n')) {
      if (line.trim() === '') continue;
      const { Ref, Err } = JSON.parse(line) as { Ref?: string; Err?: string };
      if (Err !== undefined && Err !== '') return { ok: false, reply: kuboErrorReply(Err) };
      if (Ref !== undefined && Ref !== '') refs.push(Ref);
    }
    return { ok: true, value: refs };
  }

  /**
   * Pins `cid` on the node, recursively. Given `timeoutMs` (the node may have to fetch the content), the
   * node is told to give up after it (kubo's `timeout` option: its error is an answer, not a failure of
   * the node, so no breaker counts content nobody provides), and the request waits a little longer.
   */
  pin(ctx: RequestContext, cid: string, name?: string, timeoutMs?: number): Promise<NodeOutcome<unknown>> {
    const query = new URLSearchParams([['arg', cid], ['recursive', 'true']]);
    if (name !== undefined) query.append('name', name);
    if (timeoutMs !== undefined) query.append('timeout', `${timeoutMs}ms`);
    return this.#json(ctx, 'pin/add', query, timeoutMs === undefined ? undefined : timeoutMs + Math.min(timeoutMs, 5_000));
  }

  /** Unpins `cid` on the node; content the node no longer pins is not an error (the wanted state holds). */
  async unpin(ctx: RequestContext, cid: string): Promise<NodeOutcome<unknown>> {
    const outcome = await this.#json(ctx, 'pin/rm', new URLSearchParams([['arg', cid], ['recursive', 'true']]));
    if (!outcome.ok && /not pinned/.test(Buffer.from(outcome.reply.body as Uint8Array).toString('utf8'))) return { ok: true, value: undefined };
    return outcome;
  }

  /** Moves the node's pin from `from` to `to` (unpinning `from`). */
  update(ctx: RequestContext, from: string, to: string): Promise<NodeOutcome<unknown>> {
    return this.#json(ctx, 'pin/update', new URLSearchParams([['arg', from], ['arg', to], ['unpin', 'true']]));
  }
}
