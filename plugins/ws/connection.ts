import type { ClientMessage, ClientSocket } from './client-socket.js';
import type { Duplex } from 'node:stream';
import { isUtf8 } from 'node:buffer';
import type { Subscription } from 'rxjs';
import { ContextState, Errors, GatewayError, Tokens, type Credentials, type Network, type RequestMeta } from '../../core/plugin-api.js';
import { arrayElements, type GatewayRuntime, type JsonRpcOutput, type KeyAccess } from '../../core/transport-api.js';
import { type CreditLedger } from '../../core/store-api.js';
import { type UpstreamChannel } from '../../core/upstream-api.js';
import { WS_TRANSPORT, WsCloseCodes, type WsSettings } from './options.js';
import { EXHAUSTED_REASON, exhaustedReason } from './exhausted-reason.js';
import { SUBSCRIPTION_SESSION, SubscriptionSession } from './subscriptions/subscription-session.js';
import type { SubscriptionService } from './subscriptions/subscription-service.js';

/** A message read but not started yet, because the connection has as many calls in flight as it may. */
interface Waiting {
  readonly input: Buffer;
  readonly calls: number;
}

const OPEN_BRACKET = 0x5b;
/** `ws` sends a Buffer as a binary frame unless told otherwise; JSON-RPC answers travel in text frames. */
const TEXT: { readonly binary: false } = { binary: false };
/**
 * ...except an answer that is not valid UTF-8 (an id the client sent in a binary frame with bytes that are
 * not UTF-8, echoed back): a text frame must hold UTF-8 (RFC 6455 §5.6), and a client fails the whole
 * connection (1007) on one that does not; a binary frame carries the same bytes.
 */
const BINARY: { readonly binary: true } = { binary: true };

/**
 * Calls a message holds: a batch's length, otherwise one (the engine judges whether it is valid). Only
 * a message starting with `[` is scanned, and only for its elements' bounds: it is not parsed here.
 */
function callsIn(input: Buffer): number {
  for (let i = 0; i < input.length; i++) {
    const byte = input[i]!;
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    if (byte !== OPEN_BRACKET) return 1;
    return Math.max(1, arrayElements(input)?.length ?? 1);
  }
  return 1;
}

/**
 * One client connection: every message is a JSON-RPC call or batch through the shared engine. Calls run
 * concurrently and are answered as they complete.
 *
 * At most `maxInFlight` calls run at once (a batch counts as its calls; one batch larger than the cap
 * runs alone). `ws` keeps emitting messages it had already read when reading is paused, so a message
 * that arrives while the connection is full waits in a queue rather than starting; reading is paused
 * while anything waits, so that queue never holds more than what the socket had read already. While more
 * than `maxBufferedBytes` of answers wait for a slow reader, reading pauses and no waiting message starts
 * either (a queue of small calls must not turn into a pile of large answers); they start as it reads.
 *
 * A call is charged only when its answer is written to the client: an answer that can no longer be
 * written (the client left) has its debit refunded. When the key's balance runs out, the connection
 * stops starting calls, writes the answers of the calls already in flight, and then closes with 4402.
 */
export class WsConnection {
  readonly #socket: ClientSocket;
  readonly #gateway: GatewayRuntime;
  readonly #network: Network;
  readonly #credentials: Credentials;
  readonly #meta: RequestMeta;
  readonly #settings: WsSettings;
  readonly #calls = new Set<Subscription>();
  #waiting: Waiting[] = [];
  /** Calls in flight (a batch counts as its calls). */
  #running = 0;
  #paused = false;
  #alive = true;
  #closing = false;
  /** The close that waits for the calls in flight (4402, 4401). */
  #closeWhenIdle: { readonly code: number; readonly reason: string } | undefined;
  #idle: (() => void) | undefined;
  /** The connection under the WebSocket, corked while a tick's answers are written. */
  readonly #raw: Duplex | undefined;
  #corked = false;
  readonly #uncork = (): void => {
    // Flushed early already (a subscription session's low-water mark): that cork is gone.
    if (!this.#corked) return;
    this.#corked = false;
    this.#raw!.uncork();
  };

  readonly #subscriptions: SubscriptionSession;

  constructor(socket: ClientSocket, gateway: GatewayRuntime, network: Network, credentials: Credentials, meta: RequestMeta, settings: WsSettings, subscriptions: SubscriptionService, channel?: UpstreamChannel, raw?: Duplex) {
    this.#raw = raw;
    this.#socket = socket;
    this.#gateway = gateway;
    this.#network = network;
    this.#credentials = credentials;
    this.#settings = settings;
    // Every call of this connection carries its subscriptions, so the subscription stage can reach them.
    const connection = new ContextState();
    this.#subscriptions = new SubscriptionSession(subscriptions, gateway, socket, (code, reason) => {
      this.#closing = true;
      void this.#close(code, reason, subscriptions.settings.closeTimeoutMs);
    }, { hold: () => this.#cork(), flush: this.#uncork });
    connection.set(SUBSCRIPTION_SESSION, this.#subscriptions);
    // ...and travels to upstreams by the transport's channel (its upstream WebSockets) where it can: not
    // to nodes whose WebSocket serves subscriptions only (their family says so).
    const socketCalls = network.families.every((family) => family.subscriptions?.socketCalls !== false);
    this.#meta = { ...meta, connection, channel: socketCalls ? channel : undefined };
    socket.on('message', (data) => this.#onMessage(data));
    socket.on('pong', () => { this.#alive = true; });
    socket.on('close', () => this.#onClose());
    socket.on('error', () => {
      // A protocol error (a message over the limit: 1009) makes ws start the closing handshake itself;
      // cutting the socket at once would reset it under a client still writing, which then never reads
      // the close frame (1006 instead of 1009). A socket already closing gets the handshake's 2 s bound.
      if (socket.readyState === socket.OPEN) socket.terminate();
      else setTimeout(() => socket.terminate(), 2_000).unref();
    });
  }

  /** Calls in flight (a batch counts as its calls). */
  get inFlight(): number {
    return this.#running;
  }

  /** Messages read and waiting for a free slot. */
  get waiting(): number {
    return this.#waiting.length;
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

  /**
   * The connection's key changed somewhere (revoked, rotated, a new plan): look it up again. A key that
   * is refused now ends the connection with 4401 once the calls in flight are answered, and its
   * subscriptions send nothing more; a key still accepted has its next events charged under its new plan.
   */
  keyChanged(): void {
    if (this.#closing) return;
    new Promise<KeyAccess>((resolve) => resolve(this.#gateway.checkKey(this.#credentials))).then(
      (access) => {
        this.#subscriptions.rekey(access.key, access.plan);
        // Operators (and tests) can tell from when on an open connection's events follow the change.
        this.#gateway.logger.info({ key: access.key.id, plan: access.plan.name }, 'open WebSocket re-keyed: its next events are charged under this plan');
      },
      (error: unknown) => {
        if (GatewayError.is(error) && error.code === Errors.UNAUTHORIZED.code) {
          this.#subscriptions.close();
          this.#closeAfterCalls(WsCloseCodes.UNAUTHORIZED, 'API key revoked or replaced');
          return;
        }
        // The store cannot answer now: the key stays as it was; the next call checks it again.
        this.#gateway.logger.warn({ err: error }, 'looking up a changed key for an open WebSocket failed');
      },
    );
  }

  /** Stops reading, waits for calls in flight (at most `timeoutMs`), then closes with 1001. */
  async shutdown(timeoutMs: number): Promise<void> {
    this.#closing = true;
    this.#waiting = [];
    this.#socket.pause();
    if (this.#calls.size > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, timeoutMs);
        this.#idle = () => { clearTimeout(timer); resolve(); };
      });
    }
    // Read again, so that the client's answer to the close frame completes the handshake at once: paused,
    // the socket would sit until the grace period cut it (the client seeing its close seconds late).
    // Messages that arrive now are dropped (#closing).
    this.#socket.resume();
    await this.#close(WsCloseCodes.GOING_AWAY, 'server shutting down');
  }

  #onMessage(data: ClientMessage): void {
    if (this.#closing) return;
    // The engine reads text and binary messages alike, as UTF-8 bytes (ws has checked a text frame's):
    // handing it the Buffer spares a decode here and an encode back there.
    const input = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
    const calls = callsIn(input);
    if (this.#waiting.length > 0 || !this.#fits(calls) || this.#backlogged()) {
      this.#waiting.push({ input, calls });
      this.#flow();
      return;
    }
    this.#start(input, calls);
  }

  /** More answer bytes wait for the client than it may have: start nothing until it reads. */
  #backlogged(): boolean {
    return this.#socket.bufferedAmount > this.#settings.maxBufferedBytes;
  }

  /** Starts the waiting messages that fit, unless the client has fallen behind on its answers. */
  #pump(): void {
    while (!this.#closing && this.#waiting.length > 0 && this.#fits(this.#waiting[0]!.calls) && !this.#backlogged()) {
      const next = this.#waiting.shift()!;
      this.#start(next.input, next.calls);
    }
  }

  #fits(calls: number): boolean {
    return this.#running === 0 || this.#running + calls <= this.#settings.maxInFlight;
  }

  #start(input: Buffer, calls: number): void {
    this.#running += calls;
    let done = false;
    let subscription: Subscription | undefined;
    subscription = this.#gateway
      .jsonRpc({ transport: WS_TRANSPORT, network: this.#network, credentials: this.#credentials, body: input, meta: this.#meta })
      .subscribe({
        next: (output) => this.#answer(output),
        complete: () => {
          done = true;
          this.#settled(subscription, calls);
        },
      });
    // A synchronous answer (a parse error) completes before `subscribe` returns: nothing is in flight then.
    if (!done) {
      this.#calls.add(subscription);
      this.#flow();
    }
  }

  #answer(output: JsonRpcOutput): void {
    if (output.body !== undefined) {
      if (this.#socket.readyState !== this.#socket.OPEN) {
        this.#refund(output);
        return;
      }
      this.#cork();
      this.#socket.send(output.body, typeof output.body === 'string' || isUtf8(output.body) ? TEXT : BINARY, (error) => {
        if (error !== undefined && error !== null) this.#refund(output);
        // The answer left for the kernel: the backlog shrank, so waiting messages may start.
        this.#pump();
        this.#flow();
      });
    }
    const exhausted = output.contexts.find((ctx) => ctx.error?.entry === Errors.CREDITS_EXHAUSTED);
    if (exhausted !== undefined) {
      const { key, plan } = exhausted;
      const reason = key === undefined || plan === undefined ? EXHAUSTED_REASON : exhaustedReason(this.#gateway, { key, plan, network: this.#network.name, headers: this.#meta.headers });
      this.#closeAfterCalls(WsCloseCodes.CREDITS_EXHAUSTED, reason);
    } else if (output.status === Errors.UNAUTHORIZED.httpStatus) {
      this.#closeAfterCalls(WsCloseCodes.UNAUTHORIZED, 'API key refused');
    }
  }

  /** Holds this tick's answers until the next, so that many answers cost one system call, not one each. */
  #cork(): void {
    if (this.#corked || this.#raw === undefined) return;
    this.#corked = true;
    this.#raw.cork();
    process.nextTick(this.#uncork);
  }

  /**
   * The answer of these calls never reached the client: give their credits back (once per debit id),
   * and take them out of the key's usage, which counted them when the call left the pipeline, so usage
   * agrees with the ledger.
   */
  #refund(output: JsonRpcOutput): void {
    const ledger = this.#gateway.container.resolve<CreditLedger>(Tokens.CreditLedger);
    const failed = (error: unknown): void => this.#gateway.logger.error({ err: error }, 'refund of an undelivered answer failed');
    for (const ctx of output.contexts) {
      const debit = ctx.debit;
      if (debit === undefined || ctx.error !== undefined) continue;
      // On the debit's own UTC day, as the ledger gives it back.
      const refunded = (): void => this.#gateway.recordUsage({
        keyId: debit.keyId, network: ctx.network.name, method: ctx.call.method, at: Date.parse(`${debit.day}T00:00:00.000Z`), calls: 0, credits: -debit.credits, bytes: 0, failed: false,
      });
      try {
        const done = ledger.refund(debit);
        if (done instanceof Promise) done.then(refunded, failed);
        else refunded();
      } catch (error) {
        failed(error);
      }
    }
  }

  /** Starts no more calls, drops those waiting (never started, never charged), and closes once the calls in flight are answered. */
  #closeAfterCalls(code: number, reason: string): void {
    if (this.#closeWhenIdle !== undefined) return;
    this.#closing = true;
    this.#waiting = [];
    this.#closeWhenIdle = { code, reason };
    if (this.#running === 0) void this.#close(code, reason);
  }

  #settled(subscription: Subscription | undefined, calls: number): void {
    if (subscription !== undefined) this.#calls.delete(subscription);
    this.#running -= calls;
    this.#pump();
    if (this.#running === 0) {
      this.#idle?.();
      if (this.#closeWhenIdle !== undefined) void this.#close(this.#closeWhenIdle.code, this.#closeWhenIdle.reason);
    }
    this.#flow();
  }

  /** Pauses reading while the connection is full, messages wait, or too many bytes wait for the client. */
  #flow(): void {
    if (this.#closing) return;
    const busy = this.#running >= this.#settings.maxInFlight || this.#waiting.length > 0 || this.#backlogged();
    if (busy && !this.#paused) {
      this.#paused = true;
      this.#socket.pause();
    } else if (!busy && this.#paused) {
      this.#paused = false;
      this.#socket.resume();
    }
  }

  #close(code: number, reason: string, graceMs = 2_000): Promise<void> {
    return new Promise((resolve) => {
      if (this.#socket.readyState === this.#socket.CLOSED) return resolve();
      // A peer that never completes the closing handshake is cut off.
      const cut = setTimeout(() => {
        this.#gateway.logger.debug({ code, graceMs }, 'WebSocket client did not answer the close frame in time: connection cut');
        this.#socket.terminate();
      }, graceMs);
      cut.unref();
      this.#socket.once('close', () => {
        clearTimeout(cut);
        resolve();
      });
      this.#socket.close(code, reason);
    });
  }

  #onClose(): void {
    // Unsubscribing cancels the calls in flight: their upstream requests are aborted and, since their
    // answers can no longer reach the client, they are refunded.
    this.#closing = true;
    this.#subscriptions.close();
    // Waiting messages were never started: nothing to cancel or refund.
    this.#waiting = [];
    const calls = [...this.#calls];
    this.#calls.clear();
    for (const call of calls) call.unsubscribe();
    this.#idle?.();
  }
}
