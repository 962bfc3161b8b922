import { setMaxListeners } from 'node:events';
import type { WebSocket, RawData } from 'ws';
import type { Subscription } from 'rxjs';
import { Errors, type Credentials, type GatewayRuntime, type JsonRpcOutput, type Network, type RequestMeta } from '../../core/index.js';
import { WsCloseCodes, type WsSettings } from './options.js';

/**
 * One client connection: every message is a JSON-RPC call or batch through the shared engine. Calls run
 * concurrently and are answered as they complete; reading pauses while too many are in flight or the
 * client is slow to read what was sent.
 */
export class WsConnection {
  readonly #socket: WebSocket;
  readonly #gateway: GatewayRuntime;
  readonly #network: Network;
  readonly #credentials: Credentials;
  readonly #meta: RequestMeta;
  readonly #settings: WsSettings;
  readonly #calls = new Set<Subscription>();
  readonly #aborted = new AbortController();
  #paused = false;
  #alive = true;
  #closing = false;
  #idle: (() => void) | undefined;

  constructor(socket: WebSocket, gateway: GatewayRuntime, network: Network, credentials: Credentials, meta: RequestMeta, settings: WsSettings) {
    this.#socket = socket;
    this.#gateway = gateway;
    this.#network = network;
    this.#credentials = credentials;
    this.#meta = meta;
    this.#settings = settings;
    // Every call in flight listens on the connection's abort signal.
    setMaxListeners(0, this.#aborted.signal);
    socket.on('message', (data, isBinary) => this.#onMessage(data, isBinary));
    socket.on('pong', () => { this.#alive = true; });
    socket.on('close', () => this.#onClose());
    socket.on('error', () => socket.terminate());
  }

  /** Calls in flight. */
  get inFlight(): number {
    return this.#calls.size;
  }

  /** Called by the transport's keep-alive timer: drops a peer that did not answer the previous ping. */
  heartbeat(): void {
    if (!this.#alive) {
      this.#socket.terminate();
      return;
    }
    this.#alive = false;
    this.#socket.ping();
  }

  /** Stops reading, waits for calls in flight (at most `timeoutMs`), then closes with 1001. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.#closing = true;
    this.#socket.pause();
    if (this.#calls.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.#idle = () => { clearTimeout(timer); resolve(); };
      });
    }
    await this.#close(WsCloseCodes.GOING_AWAY, 'server shutting down');
  }

  #onMessage(data: RawData, isBinary: boolean): void {
    if (this.#closing) return;
    const body = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const input = isBinary ? body : body.toString('utf8');
    let done = false;
    let subscription: Subscription | undefined;
    subscription = this.#gateway
      .jsonRpc({ transport: 'ws', network: this.#network, credentials: this.#credentials, body: input, meta: this.#meta, signal: this.#aborted.signal })
      .subscribe({
        next: (output) => this.#answer(output),
        complete: () => {
          done = true;
          this.#settled(subscription);
        },
      });
    // A synchronous answer (a parse error) completes before `subscribe` returns: nothing is in flight then.
    if (!done) {
      this.#calls.add(subscription);
      this.#flow();
    }
  }

  #answer(output: JsonRpcOutput): void {
    if (this.#socket.readyState !== this.#socket.OPEN) return;
    if (output.body !== undefined) this.#socket.send(output.body, () => this.#flow());
    if (output.contexts.some((ctx) => ctx.error?.entry === Errors.CREDITS_EXHAUSTED)) {
      this.#closing = true;
      void this.#close(WsCloseCodes.CREDITS_EXHAUSTED, 'daily credit limit reached');
    } else if (output.status === Errors.UNAUTHORIZED.httpStatus) {
      this.#closing = true;
      void this.#close(WsCloseCodes.UNAUTHORIZED, 'API key refused');
    }
  }

  #settled(subscription: Subscription | undefined): void {
    if (subscription !== undefined) this.#calls.delete(subscription);
    if (this.#calls.size === 0) this.#idle?.();
    this.#flow();
  }

  /** Pauses reading while too many calls are in flight or too many bytes wait for the client. */
  #flow(): void {
    if (this.#closing) return;
    const busy = this.#calls.size >= this.#settings.maxInFlight || this.#socket.bufferedAmount > this.#settings.maxBufferedBytes;
    if (busy && !this.#paused) {
      this.#paused = true;
      this.#socket.pause();
    } else if (!busy && this.#paused) {
      this.#paused = false;
      this.#socket.resume();
    }
  }

  #close(code: number, reason: string): Promise<void> {
    return new Promise((resolve) => {
      if (this.#socket.readyState === this.#socket.CLOSED) return resolve();
      this.#socket.once('close', () => resolve());
      this.#socket.close(code, reason);
      // A peer that never completes the closing handshake is cut off.
      setTimeout(() => this.#socket.terminate(), 2_000).unref();
    });
  }

  #onClose(): void {
    // Calls in flight are aborted, not dropped: their pipeline still runs to the end, so a call that no
    // node answered is refunded like any other.
    this.#closing = true;
    this.#aborted.abort();
  }
}
