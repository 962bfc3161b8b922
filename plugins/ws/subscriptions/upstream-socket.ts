import type { WebSocket, RawData } from 'ws';
import { ws as wsPackage } from '../peers.js';

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

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
  readonly timer: NodeJS.Timeout;
  /** For a subscribe call: the handler registered as the answer is read, before any event can arrive. */
  readonly handler?: UpstreamEventHandler;
}

/**
 * One WebSocket to an upstream node, multiplexed: every call gets an id of this socket's own (the
 * answer is matched by it), and notifications are routed by the node's subscription id. A node that
 * misses a ping answer is dropped; whoever uses the socket learns it through `onClose`.
 */
export class UpstreamSocket {
  readonly #socket: WebSocket;
  readonly #pending = new Map<number, Pending>();
  readonly #handlers = new Map<string, UpstreamEventHandler>();
  readonly #closeListeners = new Set<() => void>();
  readonly #notification: string;
  readonly #timeoutMs: number;
  readonly #opened: Promise<void>;
  #nextId = 1;
  #alive = true;
  #closed = false;
  readonly #pinger: NodeJS.Timeout;

  constructor(url: string, headers: Readonly<Record<string, string>>, notification: string, pingMs: number, timeoutMs: number) {
    this.#notification = notification;
    this.#timeoutMs = timeoutMs;
    this.#socket = new wsPackage.WebSocket(url, { headers, handshakeTimeout: timeoutMs, perMessageDeflate: false });
    this.#opened = new Promise((resolve, reject) => {
      this.#socket.once('open', () => resolve());
      this.#socket.once('error', reject);
    });
    this.#opened.catch(() => { /* reported to the first caller */ });
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

  /** Subscribes: resolves with the node's subscription id; `handler` gets every event of it. */
  subscribe(method: string, params: readonly unknown[], handler: UpstreamEventHandler): Promise<string> {
    return this.#send(method, params, handler) as Promise<string>;
  }

  /** Unsubscribes (the answer is not waited for: the handler is dropped at once). */
  unsubscribe(method: string, id: string): void {
    this.#handlers.delete(id);
    if (!this.#closed) this.#send(method, [id], undefined).catch(() => { /* the node forgets it when the socket closes anyway */ });
  }

  /** Closes the socket. */
  close(): void {
    if (this.#closed) return;
    this.#socket.close(1000);
    setTimeout(() => this.#socket.terminate(), 1_000).unref();
  }

  async #send(method: string, params: readonly unknown[], handler: UpstreamEventHandler | undefined): Promise<unknown> {
    await this.#opened;
    if (this.#closed) throw new Error('upstream WebSocket closed');
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`upstream WebSocket: ${method} timed out`));
      }, this.#timeoutMs);
      timer.unref();
      this.#pending.set(id, { resolve, reject, timer, handler });
      this.#socket.send(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  #onMessage(data: RawData): void {
    let message: { id?: unknown; method?: unknown; params?: { subscription?: unknown; result?: unknown }; result?: unknown; error?: { code?: number; message?: string } };
    try {
      message = JSON.parse(String(data)) as typeof message;
    } catch {
      return;
    }
    if (message.method === this.#notification) {
      const id = message.params?.subscription;
      if (typeof id === 'string') this.#handlers.get(id)?.(message.params!.result);
      return;
    }
    if (typeof message.id !== 'number') return;
    const pending = this.#pending.get(message.id);
    if (pending === undefined) return;
    this.#pending.delete(message.id);
    clearTimeout(pending.timer);
    if (message.error !== undefined) return pending.reject(new UpstreamCallError(message.error.code ?? -32603, message.error.message ?? 'upstream error'));
    if (pending.handler !== undefined && typeof message.result === 'string') this.#handlers.set(message.result, pending.handler);
    pending.resolve(message.result);
  }

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#pinger);
    this.#handlers.clear();
    for (const pending of this.#pending.values()) {
      clearTimeout(pending.timer);
      pending.reject(new Error('upstream WebSocket closed'));
    }
    this.#pending.clear();
    for (const listener of [...this.#closeListeners]) listener();
    this.#closeListeners.clear();
  }
}
