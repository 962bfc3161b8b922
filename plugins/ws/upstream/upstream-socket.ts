import { connect as netConnect, isIP, type NetConnectOpts, type Socket } from 'node:net';
import { connect as tlsConnect, type ConnectionOptions } from 'node:tls';
import type { WebSocket, RawData } from 'ws';
import { UpstreamFailure } from '../../../core/upstream-api.js';
import { arrayElements, type CancelSignal } from '../../../core/transport-api.js';
import { type UpstreamReply } from '../../../core/plugin-api.js';
import { ws as wsPackage } from '../peers.js';
import { idRange, integerAt, replaceAt, type ValueRange } from './json-ids.js';

/** A notification handler of one upstream subscription. */
export type UpstreamEventHandler = (result: unknown) => void;

/** An answer the node gave with an `error`. */
export class UpstreamCallError extends Error {
  /** The node's error code. */
  readonly code: number;

  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

const OPEN_BRACKET = 0x5b;
const OPEN_BRACE = 0x7b;
/** `ws` sends a Buffer as a binary frame unless told otherwise; JSON-RPC travels in text frames. */
const TEXT: { readonly binary: false } = { binary: false };
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

function firstByte(body: Buffer): number | undefined {
  for (let i = 0; i < body.length; i++) {
    const byte = body[i]!;
    if (byte !== 0x20 && byte !== 0x0a && byte !== 0x0d && byte !== 0x09) return byte;
  }
  return undefined;
}

/**
 * A call waiting for its answer: one object per call, which is also the argument of its timer (so the
 * timer needs no closure of its own).
 */
class Pending {
  timer: NodeJS.Timeout | undefined;
  /** Its cancellation listener, when it can be cancelled. */
  onAbort: (() => void) | undefined;

  constructor(
    readonly socket: UpstreamSocket,
    /** The socket's id of the call (the first of a batch's). */
    readonly id: number,
    /** The client's ids, as bytes, for an answer passed on as bytes (one per call of a batch); undefined for a parsed answer. */
    readonly originals: readonly Buffer[] | undefined,
    /** Whether the request was a JSON-RPC batch. */
    readonly batch: boolean,
    readonly signal: CancelSignal | undefined,
    readonly resolve: (value: never) => void,
    readonly reject: (error: Error) => void,
    /** For a subscribe call: the handler registered as the answer is read, before any event can arrive. */
    readonly handler: UpstreamEventHandler | undefined,
  ) {}
}

function cancelled(): UpstreamFailure {
  return new UpstreamFailure('reset', 'the call was cancelled', { maybeReceived: true });
}

function timedOut(pending: Pending, timeoutMs: number): void {
  pending.socket.drop(pending, new UpstreamFailure('timeout', `the upstream WebSocket did not answer in ${timeoutMs} ms`, { maybeReceived: true }));
}

/**
 * One WebSocket to an upstream node, multiplexed: every call gets an id of this socket's own (the
 * answer is matched by it and given back with the caller's id), and notifications are routed by the
 * node's subscription id. It carries subscriptions (`subscribe`, `call`) and clients' calls
 * as bytes (`request`). A node that misses a ping answer is dropped; every call waiting on it then
 * fails, and whoever holds the socket learns it through `onClose`. A socket is never reopened.
 */
export class UpstreamSocket {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #handlers = new Map<string, UpstreamEventHandler>();
  readonly #closeListeners = new Set<() => void>();
  readonly #timeoutMs: number;
  /** Resolves once the socket is open; rejects when it could not open. */
  readonly opened: Promise<void>;
  #nextId = 1;
  #alive = true;
  #closed = false;
  #waiting = 0;
  readonly #pinger: NodeJS.Timeout;
  /** The TCP (or TLS) connection under the WebSocket, corked while a tick's calls are written. */
  #raw: Socket | undefined;
  #corked = false;

  /**
   * @param pingMs Interval of pings; a node that has not answered the previous one is dropped.
   * @param timeoutMs Handshake timeout, and the timeout of `call` and `subscribe`.
   */
  constructor(url: string, headers: Readonly<Record<string, string>>, pingMs: number, timeoutMs: number) {
    this.#timeoutMs = timeoutMs;
    const secure = url.startsWith('wss:');
    // ws hands it the options of the handshake's request (its type is that of http.request's option);
    // they are read as ws's own connectors read them: `path` is the URL's, not a socket path.
    const open = (options: ConnectionOptions & { path?: string; socketPath?: string }): Socket => {
      if (secure) {
        options.path = undefined;
        if (options.servername === undefined) options.servername = isIP(options.host ?? '') === 0 ? options.host : '';
        return (this.#raw = tlsConnect(options));
      }
      options.path = options.socketPath;
      return (this.#raw = netConnect(options as NetConnectOpts));
    };
    this.#socket = new wsPackage.WebSocket(url, {
      headers,
      handshakeTimeout: timeoutMs,
      perMessageDeflate: false,
      // The connection is kept, so that the calls written in one tick leave in one write.
      createConnection: open as never,
    });
    this.opened = new Promise((resolve, reject) => {
      this.#socket.once('open', () => resolve());
      this.#socket.once('close', () => reject(new Error('upstream WebSocket closed before it opened')));
    });
    this.opened.catch(() => { /* reported to the first caller */ });
    this.#socket.on('message', (data) => this.#onMessage(data));
    this.#socket.on('pong', () => { this.#alive = true; });
    this.#socket.on('error', () => this.#socket.terminate());
    this.#socket.on('close', () => this.#onClose());
    this.#pinger = setInterval(() => {
      if (!this.#alive) return this.#socket.terminate();
      this.#alive = false;
      if (this.#socket.readyState === wsPackage.WebSocket.OPEN) this.#socket.ping();
    }, pingMs);
    this.#pinger.unref();
  }

  /** Whether the socket is gone (it is never reopened: a new one is made). */
  get closed(): boolean {
    return this.#closed;
  }

  /** Whether calls can be sent on it now. */
  get open(): boolean {
    return !this.#closed && this.#socket.readyState === wsPackage.WebSocket.OPEN;
  }

  /** Calls waiting for their answer. */
  get waiting(): number {
    return this.#waiting;
  }

  /** Subscriptions open on it. */
  get subscriptions(): number {
    return this.#handlers.size;
  }

  /** Calls `listener` once when the socket closes, for whatever reason. */
  onClose(listener: () => void): () => void {
    this.#closeListeners.add(listener);
    return () => this.#closeListeners.delete(listener);
  }

  /** Calls a method: resolves with its `result`, rejects with the node's error, a timeout, or the socket closing. */
  call(method: string, params: readonly unknown[]): Promise<unknown> {
    return this.#send(method, params, undefined);
  }

  /**
   * Subscribes: resolves with the node's subscription id as the node wrote it (a string on geth, a number
   * on agave); `handler` gets every event of it.
   */
  subscribe(method: string, params: readonly unknown[], handler: UpstreamEventHandler): Promise<string | number> {
    return this.#send(method, params, handler) as Promise<string | number>;
  }

  /** Unsubscribes (the answer is not waited for: the handler is dropped at once); `id` goes back as the node gave it. */
  unsubscribe(method: string, id: string | number): void {
    this.#handlers.delete(String(id));
    if (!this.#closed) this.#send(method, [id], undefined).catch(() => { /* the node forgets it when the socket closes anyway */ });
  }

  /** Drops the handler of a subscription the node ended by itself (nothing is sent). */
  forget(id: string | number): void {
    this.#handlers.delete(String(id));
  }

  /**
   * Sends a JSON-RPC call or batch as bytes, each call under an id of this socket's, and resolves with
   * the node's answer as bytes with the request's own ids back (as an HTTP POST of `body` would have
   * answered). Returns undefined when the socket is not open or `body` is not a call or batch with ids:
   * the caller sends it some other way. Rejects with an `UpstreamFailure`: `timeout` after `timeoutMs`,
   * `reset` when the socket closes or `signal` aborts (the call's entry is then dropped, and a late answer
   * with it).
   */
  request(body: Buffer, timeoutMs: number, signal: CancelSignal): Promise<UpstreamReply> | undefined {
    if (!this.open || signal.aborted) return undefined;
    const first = firstByte(body);
    let originals: Buffer[];
    let sent: Buffer;
    const id = this.#nextId;
    if (first === OPEN_BRACE) {
      const range = idRange(body);
      if (range === undefined) return undefined;
      originals = [body.subarray(range.start, range.end)];
      sent = replaceAt(body, range, String(id));
    } else if (first === OPEN_BRACKET) {
      const rewritten = rewriteBatch(body, id);
      if (rewritten === undefined) return undefined;
      ({ originals, sent } = rewritten);
    } else {
      return undefined;
    }
    this.#nextId += originals.length;
    const batch = first === OPEN_BRACKET;
    return new Promise<UpstreamReply>((resolve, reject) => {
      const pending = new Pending(this, id, originals, batch, signal, resolve as (value: never) => void, reject, undefined);
      this.#track(pending, originals.length, timeoutMs);
      this.#cork();
      this.#socket.send(sent, TEXT);
    });
  }

  /**
   * Ends a waiting call with `error` (its cancellation, its timeout).
   *
   * @internal
   */
  drop(pending: Pending, error: Error): void {
    if (this.#settle(pending)) pending.reject(error);
  }

  /** Closes the socket. */
  close(): void {
    if (this.#closed) return;
    this.#socket.close(1000);
    setTimeout(() => this.#socket.terminate(), 1_000).unref();
  }

  /** Holds this tick's writes until the next, so many calls cost one system call, not one each. */
  #cork(): void {
    const raw = this.#raw;
    if (this.#corked || raw === undefined) return;
    this.#corked = true;
    raw.cork();
    process.nextTick(() => {
      this.#corked = false;
      raw.uncork();
    });
  }

  #track(pending: Pending, ids: number, timeoutMs: number): void {
    for (let i = 0; i < ids; i++) this.#pending.set(pending.id + i, pending);
    this.#waiting++;
    pending.timer = setTimeout(timedOut, timeoutMs, pending, timeoutMs);
    const signal = pending.signal;
    if (signal !== undefined) {
      // Cancelled: the entry goes, and an answer arriving later finds nothing.
      pending.onAbort = () => this.drop(pending, cancelled());
      signal.addEventListener('abort', pending.onAbort, { once: true });
    }
  }

  /** Forgets a waiting call; false when it was settled already. */
  #settle(pending: Pending): boolean {
    if (this.#pending.get(pending.id) !== pending) return false;
    const ids = pending.originals?.length ?? 1;
    for (let i = 0; i < ids; i++) this.#pending.delete(pending.id + i);
    this.#waiting--;
    clearTimeout(pending.timer);
    if (pending.onAbort !== undefined) pending.signal!.removeEventListener('abort', pending.onAbort);
    return true;
  }

  async #send(method: string, params: readonly unknown[], handler: UpstreamEventHandler | undefined): Promise<unknown> {
    await this.opened;
    if (this.#closed) throw new UpstreamFailure('reset', 'upstream WebSocket closed', { maybeReceived: false });
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#track(new Pending(this, id, undefined, false, undefined, resolve as (value: never) => void, reject, handler), 1, this.#timeoutMs);
      this.#socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  #onMessage(data: RawData): void {
    const body = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (firstByte(body) === OPEN_BRACKET) return this.#onBatchAnswer(body);
    const range = idRange(body, true);
    if (range === undefined) return this.#onNotification(body);
    const pending = this.#pending.get(integerAt(body, range));
    if (pending === undefined || !this.#settle(pending)) return;
    if (pending.originals !== undefined) {
      (pending.resolve as (reply: UpstreamReply) => void)({ status: 200, headers: NO_HEADERS, body: replaceAt(body, range, pending.originals[0]!) });
      return;
    }
    let message: { result?: unknown; error?: { code?: number; message?: string } };
    try {
      message = JSON.parse(body.toString('utf8')) as typeof message;
    } catch {
      pending.reject(new UpstreamFailure('bad-response', 'the upstream WebSocket sent an answer that is not JSON', { maybeReceived: true }));
      return;
    }
    if (message.error !== undefined) return pending.reject(new UpstreamCallError(message.error.code ?? -32603, message.error.message ?? 'upstream error'));
    if (pending.handler !== undefined && (typeof message.result === 'string' || typeof message.result === 'number')) this.#handlers.set(String(message.result), pending.handler);
    (pending.resolve as (value: unknown) => void)(message.result);
  }

  /** A batch's answer: found by any of its ids; each element gets its call's id back. */
  #onBatchAnswer(body: Buffer): void {
    const elements = arrayElements(body);
    if (elements === undefined || elements.length === 0) return;
    let pending: Pending | undefined;
    const ranges: Array<ValueRange | undefined> = [];
    for (const element of elements) {
      const range = idRange(element);
      ranges.push(range);
      pending ??= range === undefined ? undefined : this.#pending.get(integerAt(element, range));
    }
    if (pending === undefined || pending.originals === undefined || !this.#settle(pending)) return;
    const parts: Buffer[] = [];
    elements.forEach((element, i) => {
      const range = ranges[i];
      const at = range === undefined ? -1 : integerAt(element, range) - pending.id;
      parts.push(i === 0 ? OPEN_ARRAY_BYTES : COMMA_BYTES);
      parts.push(at >= 0 && at < pending.originals!.length ? replaceAt(element, range!, pending.originals![at]!) : element);
    });
    parts.push(CLOSE_ARRAY_BYTES);
    (pending.resolve as (reply: UpstreamReply) => void)({ status: 200, headers: NO_HEADERS, body: Buffer.concat(parts) });
  }

  #onNotification(body: Buffer): void {
    let message: { params?: { subscription?: unknown; result?: unknown } };
    try {
      message = JSON.parse(body.toString('utf8')) as typeof message;
    } catch {
      return;
    }
    const id = message.params?.subscription;
    if (typeof id === 'string' || typeof id === 'number') this.#handlers.get(String(id))?.(message.params!.result);
  }

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pinger);
    this.#handlers.clear();
    const waiting = new Set(this.#pending.values());
    for (const pending of waiting) this.drop(pending, new UpstreamFailure('reset', 'upstream WebSocket closed', { maybeReceived: true }));
    for (const listener of [...this.#closeListeners]) listener();
    this.#closeListeners.clear();
  }
}

const OPEN_ARRAY_BYTES = Buffer.from('[');
const COMMA_BYTES = Buffer.from(',');
const CLOSE_ARRAY_BYTES = Buffer.from(']');

/** A batch with each call's id replaced by `first`, `first + 1`...; undefined when a call has no id. */
function rewriteBatch(body: Buffer, first: number): { originals: Buffer[]; sent: Buffer } | undefined {
  const elements = arrayElements(body);
  if (elements === undefined || elements.length === 0) return undefined;
  const originals: Buffer[] = [];
  const parts: Buffer[] = [];
  for (let i = 0; i < elements.length; i++) {
    const element = elements[i]!;
    const range = idRange(element);
    if (range === undefined) return undefined;
    originals.push(element.subarray(range.start, range.end));
    parts.push(i === 0 ? OPEN_ARRAY_BYTES : COMMA_BYTES, replaceAt(element, range, String(first + i)));
  }
  parts.push(CLOSE_ARRAY_BYTES);
  return { originals, sent: Buffer.concat(parts) };
}
