/**
 * The node's WebSocket JSON-RPC service (agave's pubsub): subscribe and unsubscribe calls, and
 * notifications written `{"jsonrpc":"2.0","method":"<kind>Notification","params":{"result":…,"subscription":N}}`.
 * It takes WebSocket upgrades from any HTTP server given to {@link PubsubService.attach}.
 *
 * @module
 */
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import type { TransactionRecord } from '../ledger/ledger.js';
import { jsonText } from '../json-text.js';
import type { LiteSvmNode } from '../litesvm-node.js';
import { RpcError } from '../rpc-error.js';
import { readU64 } from '../serde-params.js';
import { SUBSCRIPTION_KINDS } from './kinds.js';
import type { Subscription } from './subscription.js';

/** A running pubsub service. */
export interface PubsubService {
  /** Serves WebSocket upgrades arriving at `server`. */
  attach(server: Server): void;
  /** Live subscriptions (all connections). */
  readonly size: number;
  /** Closes every connection and detaches from the node. */
  close(): void;
}

type Id = string | number | null;

interface Live {
  readonly socket: WebSocket;
  readonly method: string;
  readonly sub: Subscription;
}

const UNSUBSCRIBES = new Map(Object.entries(SUBSCRIPTION_KINDS).map(([method, kind]) => [kind.unsubscribe, method]));

function reply(id: Id, outcome: { result: unknown } | { error: RpcError }): string {
  if ('result' in outcome) return `{"jsonrpc":"2.0","result":${jsonText(outcome.result)},"id":${jsonText(id)}}`;
  const { code, message, data } = outcome.error;
  return `{"jsonrpc":"2.0","error":${jsonText({ code, message, data })},"id":${jsonText(id)}}`;
}

/** Starts the pubsub service of `node`. */
export function startPubsub(node: LiteSvmNode): PubsubService {
  const wss = new WebSocketServer({ noServer: true, maxPayload: 1024 * 1024 });
  const live = new Map<number, Live>();
  let nextId = 0;

  // One listener per node event, fanned out to every subscription.
  // A subscription that throws is dropped, never the node's slot timer or a send with it.
  const dispatch = <K extends keyof Subscription>(hook: K, ...args: Parameters<NonNullable<Subscription[K]>>): void => {
    for (const [id, { sub }] of [...live.entries()]) {
      try {
        (sub[hook] as ((...a: typeof args) => void) | undefined)?.(...args);
      } catch {
        live.delete(id);
      }
    }
  };
  const onSlot = (slot: bigint): void => dispatch('onSlot', slot);
  const onTransaction = (record: TransactionRecord): void => dispatch('onTransaction', record);
  const onAccounts = (addresses: readonly string[]): void => dispatch('onAccounts', addresses, node.slot('processed'));
  node.events.on('slot', onSlot);
  node.events.on('transaction', onTransaction);
  node.events.on('accounts', onAccounts);

  const send = (socket: WebSocket, text: string): void => {
    if (socket.readyState === socket.OPEN) socket.send(text);
  };

  const subscribe = (socket: WebSocket, method: string, params: unknown): number => {
    const kind = SUBSCRIPTION_KINDS[method]!;
    const id = nextId++;
    const sub = kind.create(params, {
      node,
      notify: (result) => {
        if (!live.has(id)) return;
        send(socket, `{"jsonrpc":"2.0","method":"${kind.notification}","params":{"result":${jsonText(result)},"subscription":${id}}}`);
      },
      done: () => { live.delete(id); },
    });
    live.set(id, { socket, method, sub });
    return id;
  };

  const answer = (socket: WebSocket, text: string): void => {
    let call: unknown;
    try {
      call = JSON.parse(text);
    } catch {
      send(socket, reply(null, { error: new RpcError(-32700, 'Parse error') }));
      return;
    }
    if (typeof call !== 'object' || call === null || Array.isArray(call)) { send(socket, reply(null, { error: RpcError.invalidRequest() })); return; }
    const { jsonrpc, method, params, id } = call as Record<string, unknown>;
    const callId = (typeof id === 'string' || typeof id === 'number' ? id : null) as Id;
    if (jsonrpc !== '2.0' || typeof method !== 'string') { send(socket, reply(callId, { error: RpcError.invalidRequest() })); return; }
    try {
      if (Object.hasOwn(SUBSCRIPTION_KINDS, method)) {
        const subId = subscribe(socket, method, params);
        send(socket, reply(callId, { result: subId }));
        live.get(subId)?.sub.onSubscribed?.();
        return;
      }
      const kindOf = UNSUBSCRIBES.get(method);
      if (kindOf === undefined) { send(socket, reply(callId, { error: new RpcError(-32601, 'Method not found') })); return; }
      if (!Array.isArray(params) || params.length !== 1) throw RpcError.invalidParams('Invalid parameters: Expected 1 parameter');
      const subId = readU64(params[0]);
      const entry = subId === undefined ? undefined : live.get(subId);
      if (entry === undefined || entry.socket !== socket || entry.method !== kindOf) throw RpcError.invalidParams('Invalid subscription id.');
      live.delete(subId!);
      send(socket, reply(callId, { result: true }));
    } catch (error) {
      send(socket, reply(callId, { error: error instanceof RpcError ? error : new RpcError(-32603, 'Internal error') }));
    }
  };

  wss.on('connection', (socket) => {
    socket.on('message', (data, isBinary) => { if (!isBinary) answer(socket, data.toString()); });
    socket.on('close', () => { for (const [id, entry] of live) if (entry.socket === socket) live.delete(id); });
    socket.on('error', () => socket.terminate());
  });

  const upgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    wss.handleUpgrade(req, socket, head, (ws) => wss.emit('connection', ws, req));
  };

  return {
    attach(server) { server.on('upgrade', upgrade); },
    get size() { return live.size; },
    close() {
      node.events.off('slot', onSlot);
      node.events.off('transaction', onTransaction);
      node.events.off('accounts', onAccounts);
      live.clear();
      for (const client of wss.clients) client.terminate();
      wss.close();
    },
  };
}
