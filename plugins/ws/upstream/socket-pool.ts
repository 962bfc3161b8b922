import type { Upstream } from '../../../core/upstream-api.js';
import { UpstreamSocket } from './upstream-socket.js';

/** How the transport's upstream WebSockets are kept. */
export interface SocketPoolSettings {
  /** Sockets per upstream that carry clients' calls; 0: calls go over HTTP only. */
  readonly connections: number;
  /** Ping interval; a node that has not answered the previous ping is dropped. */
  readonly pingMs: number;
  /** Handshake timeout, and the timeout of a subscription's own calls. */
  readonly timeoutMs: number;
}

/** First wait before reopening a socket that closed or failed to open, doubled on each failure in a row. */
const FIRST_RETRY_MS = 100;
/** Longest wait between attempts to reopen. */
const LAST_RETRY_MS = 5_000;

/** The sockets of one upstream: a fixed number of slots, each reopened (after a backoff) when its socket closes. */
class UpstreamSockets {
  readonly #slots: Array<UpstreamSocket | undefined>;
  #next = 0;
  #retryAt = 0;
  #retryMs = FIRST_RETRY_MS;

  constructor(
    readonly upstream: Upstream,
    readonly settings: SocketPoolSettings,
    size: number,
  ) {
    this.#slots = new Array<UpstreamSocket | undefined>(size).fill(undefined);
  }

  /** Sockets open or opening. */
  get sockets(): readonly UpstreamSocket[] {
    return this.#slots.filter((s): s is UpstreamSocket => s !== undefined);
  }

  /**
   * An open socket for a call, taken in turn; undefined while none is open. A slot without a socket
   * gets one (once the backoff after a failure has passed), to serve later calls.
   */
  forCall(): UpstreamSocket | undefined {
    const slots = this.#slots;
    for (let i = 0; i < slots.length; i++) {
      const at = (this.#next + i) % slots.length;
      const socket = slots[at];
      if (socket === undefined) {
        this.#fill(at);
        continue;
      }
      if (socket.open) {
        this.#next = at + 1;
        return socket;
      }
    }
    return undefined;
  }

  /** A socket for a subscription: an open one, else one opening, else a new one (subscriptions wait for it to open). */
  forSubscription(): UpstreamSocket {
    let opening: UpstreamSocket | undefined;
    for (const socket of this.#slots) {
      if (socket?.open === true) return socket;
      opening ??= socket;
    }
    if (opening !== undefined) return opening;
    const at = Math.max(0, this.#slots.indexOf(undefined));
    return this.#open(at);
  }

  /** Closes every socket. */
  close(): void {
    for (const socket of this.#slots) socket?.close();
    this.#slots.fill(undefined);
  }

  #fill(at: number): void {
    if (performance.now() < this.#retryAt) return;
    this.#open(at);
  }

  #open(at: number): UpstreamSocket {
    const url = this.upstream.settings.wsUrl!;
    const socket = new UpstreamSocket(url, this.upstream.settings.headers, this.settings.pingMs, this.settings.timeoutMs);
    if (at >= this.#slots.length) this.#slots.push(socket);
    else this.#slots[at] = socket;
    let opened = false;
    socket.opened.then(() => {
      opened = true;
      this.#retryMs = FIRST_RETRY_MS;
    }, () => { /* the close below backs off */ });
    socket.onClose(() => {
      const index = this.#slots.indexOf(socket);
      if (index !== -1) this.#slots[index] = undefined;
      if (!opened) {
        // A node that refuses the handshake is not asked again at once, nor by every call.
        this.#retryAt = performance.now() + this.#retryMs;
        this.#retryMs = Math.min(LAST_RETRY_MS, this.#retryMs * 2);
      }
    });
    return socket;
  }
}

/**
 * The transport's WebSockets to upstream nodes that give a `wsUrl`: a few per upstream, multiplexed,
 * shared by clients' calls (see {@link WsUpstreamChannel}) and subscription streams. A socket that
 * closes (the node restarted, a missed ping) is replaced on the next use, after a backoff when the node
 * refused to open one.
 */
export class UpstreamSocketPool {
  /** How the sockets are kept. */
  readonly settings: SocketPoolSettings;
  readonly #byUpstream = new Map<Upstream, UpstreamSockets>();
  #closed = false;

  constructor(settings: SocketPoolSettings) {
    this.settings = settings;
  }

  /** An open socket to `upstream` for a call, or undefined (no `wsUrl`, calls over HTTP only, none open yet). */
  forCall(upstream: Upstream): UpstreamSocket | undefined {
    if (this.settings.connections === 0) return undefined;
    let sockets = this.#byUpstream.get(upstream);
    if (sockets === undefined) {
      if (this.#closed || upstream.settings.wsUrl === undefined) return undefined;
      sockets = this.#add(upstream);
    }
    return sockets.forCall();
  }

  /** A socket to `upstream` for a subscription (its `wsUrl` must be set), perhaps still opening. */
  forSubscription(upstream: Upstream): UpstreamSocket {
    return (this.#byUpstream.get(upstream) ?? this.#add(upstream)).forSubscription();
  }

  /** Every socket open or opening, by upstream name (metrics, tests). */
  sockets(): Map<string, readonly UpstreamSocket[]> {
    return new Map([...this.#byUpstream.values()].map((s) => [s.upstream.name, s.sockets]));
  }

  /** Closes every socket; none opens afterwards. */
  close(): void {
    this.#closed = true;
    for (const sockets of this.#byUpstream.values()) sockets.close();
    this.#byUpstream.clear();
  }

  #add(upstream: Upstream): UpstreamSockets {
    const sockets = new UpstreamSockets(upstream, this.settings, Math.max(1, this.settings.connections));
    this.#byUpstream.set(upstream, sockets);
    return sockets;
  }
}
