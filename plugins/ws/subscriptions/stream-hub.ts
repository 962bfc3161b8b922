import type { Logger } from 'pino';
import { isPromise, type MaybePromise } from '../../../core/plugin-api.js';
import type { StreamAsk, StreamContinuity, StreamRequest, SubscriptionMethod, SubscriptionSupport } from '../../../core/family-api.js';
import { type Upstream } from '../../../core/upstream-api.js';
import type { UpstreamSocket } from '../upstream/upstream-socket.js';
import { httpAsk } from './http-ask.js';

/** A client subscription fed by a hub. */
export interface HubMember {
  /**
   * Delivers one event, its `result` already serialized (the same bytes for every member: not to be
   * changed); `last` when the stream ends with it (the member is dropped from the hub already).
   */
  deliver(result: Buffer, last: boolean): void;
}

/** What a hub needs from its registry. */
export interface HubDeps {
  /** The family's subscription support. */
  readonly support: SubscriptionSupport;
  /** The subscribe method of the stream. */
  readonly method: SubscriptionMethod;
  /** The stream. */
  readonly request: StreamRequest;
  /** The upstreams that may serve the stream now, in order (the route stage's answer for its first call). */
  readonly candidates: () => readonly Upstream[];
  /** The network's primaries. */
  readonly primaries: () => readonly Upstream[];
  /** Whether the selector sends `upstream` traffic now (breaker closed, not lagging); asked on each health check. */
  readonly healthy: (upstream: Upstream) => boolean;
  /** The shared socket to an upstream (opened if need be). */
  readonly socketFor: (upstream: Upstream) => UpstreamSocket;
  /** Logs. */
  readonly logger: Logger;
  /** How often the serving node's health is checked, ms. */
  readonly healthCheckMs: number;
  /** Timeout of a history read over HTTP, ms (those over the socket have the socket's). */
  readonly askTimeoutMs: number;
  /** Called once the hub has no member left and has closed its upstream subscription. */
  readonly closed: () => void;
}

interface Serving {
  readonly upstream: Upstream;
  readonly socket: UpstreamSocket;
  readonly ask: StreamAsk;
  readonly id: string | number;
  readonly detach: () => void;
}

/**
 * One upstream subscription shared by every client that asked for the same stream: events are read
 * once, kept continuous by the family's {@link StreamContinuity}, serialized once and handed to every
 * member. When the serving node's socket closes, or the node leaves the healthy candidates (breaker,
 * lag, missed pings), the hub subscribes on the next candidate and the continuity fills the gap.
 */
export class StreamHub {
  /** The stream's key: network, partner eligibility and the family's stream key. */
  readonly key: string;
  readonly #deps: HubDeps;
  readonly #members = new Set<HubMember>();
  readonly #continuity: StreamContinuity;
  #serving: Serving | undefined;
  #tail: Promise<void> | undefined;
  #moving = false;
  #closed = false;
  #timer: NodeJS.Timeout | undefined;
  /** Events delivered (after continuity), for metrics and tests. */
  delivered = 0;

  constructor(key: string, deps: HubDeps) {
    this.key = key;
    this.#deps = deps;
    this.#continuity = deps.support.continuity(deps.request, deps.method);
  }

  /** Members. */
  get size(): number {
    return this.#members.size;
  }

  /** The upstream serving the stream now. */
  get upstream(): Upstream | undefined {
    return this.#serving?.upstream;
  }

  /** Opens the upstream subscription on the first candidate that takes it. */
  async start(): Promise<void> {
    await this.#subscribe(undefined);
    const ask = this.#ask();
    if (ask !== undefined) await this.#continuity.opened?.(ask);
    this.#timer = setInterval(() => this.#check(), this.#deps.healthCheckMs);
    this.#timer.unref();
  }

  /** Adds a member: it gets every event from now on. */
  add(member: HubMember): void {
    this.#members.add(member);
  }

  /** Removes a member; the last one leaving closes the upstream subscription. */
  remove(member: HubMember): void {
    if (!this.#members.delete(member) || this.#members.size > 0) return;
    this.close();
  }

  /** Closes the upstream subscription (members are dropped); `ended` when the node ended it itself. */
  close(ended = false): void {
    if (this.#closed) return;
    this.#closed = true;
    clearInterval(this.#timer);
    this.#members.clear();
    this.#release(ended);
    this.#deps.closed();
  }

  #release(ended = false): void {
    const serving = this.#serving;
    this.#serving = undefined;
    if (serving === undefined) return;
    serving.detach();
    if (ended) serving.socket.forget(serving.id);
    else serving.socket.unsubscribe(this.#deps.method.unsubscribe, serving.id);
  }

  #ask(): StreamAsk | undefined {
    return this.#serving?.ask;
  }

  /** How history is read from `upstream`: on its socket, or over HTTP where the family's nodes take no calls on their WebSocket. */
  #askOf(upstream: Upstream, socket: UpstreamSocket): StreamAsk {
    if (this.#deps.support.socketCalls === false) return httpAsk(upstream, this.#deps.askTimeoutMs);
    return (method, params) => socket.call(method, params);
  }

  /** Subscribes on the first candidate (other than `avoid`, tried last) that answers. */
  async #subscribe(avoid: Upstream | undefined): Promise<void> {
    const candidates = this.#deps.candidates().filter((u) => u.settings.wsUrl !== undefined);
    candidates.sort((a, b) => Number(a === avoid) - Number(b === avoid));
    let lastError: unknown = new Error('no upstream of this network has a WebSocket URL');
    for (const upstream of candidates) {
      if (this.#closed) return;
      let socket: UpstreamSocket;
      try {
        socket = this.#deps.socketFor(upstream);
        let live = true;
        const ask = this.#askOf(upstream, socket);
        // Events can come in the same read as the subscription's answer: the handler works before `serving` is set.
        const id = await socket.subscribe(this.#deps.method.subscribe, this.#deps.request.params, (result) => { if (live) this.#run(() => this.#continuity.next(result, ask)); });
        if (this.#closed) {
          socket.unsubscribe(this.#deps.method.unsubscribe, id);
          return;
        }
        const stopListening = socket.onClose(() => { if (live) this.#move('its node\'s WebSocket closed'); });
        this.#serving = { upstream, socket, ask, id, detach: () => { live = false; stopListening(); } };
        return;
      } catch (error) {
        lastError = error;
        this.#deps.logger.warn({ upstream: upstream.name, err: error }, 'subscribing upstream failed');
      }
    }
    throw lastError;
  }

  /** Runs continuity work in order: synchronous results are delivered at once when nothing is pending. */
  #run(work: () => MaybePromise<readonly unknown[]>): void {
    if (this.#tail === undefined) {
      let out: MaybePromise<readonly unknown[]>;
      try {
        out = work();
      } catch (error) {
        this.#deps.logger.warn({ err: error, stream: this.key }, 'stream event dropped');
        return;
      }
      if (!isPromise(out)) return this.#emit(out);
      this.#wait(out);
      return;
    }
    const tail: Promise<void> = this.#tail.then(() => {
      const out = work();
      return isPromise(out) ? out.then((events) => this.#emit(events)) : this.#emit(out);
    }).catch((error: unknown) => this.#deps.logger.warn({ err: error, stream: this.key }, 'stream history read failed'))
      .finally(() => { if (this.#tail === tail) this.#tail = undefined; });
    this.#tail = tail;
  }

  #wait(out: Promise<readonly unknown[]>): void {
    const tail: Promise<void> = out.then((events) => this.#emit(events))
      .catch((error: unknown) => this.#deps.logger.warn({ err: error, stream: this.key }, 'stream history read failed'))
      .finally(() => { if (this.#tail === tail) this.#tail = undefined; });
    this.#tail = tail;
  }

  #emit(events: readonly unknown[]): void {
    if (this.#closed) return;
    for (const event of events) {
      const result = Buffer.from(JSON.stringify(event));
      this.delivered++;
      if (this.#continuity.ends?.(event) === true) {
        const members = [...this.#members];
        this.close(true);
        for (const member of members) member.deliver(result, true);
        return;
      }
      for (const member of this.#members) member.deliver(result, false);
    }
  }

  /** Moves the stream off its node when the node is no longer among the healthy candidates, or a partner serves while a primary could. */
  #check(): void {
    const serving = this.#serving;
    if (serving === undefined || this.#moving) return;
    // The selector's status, not a route: a check must not take a breaker's trial call or a turn in the rotation.
    if (!this.#deps.healthy(serving.upstream)) return this.#move('its node is no longer healthy');
    if (serving.upstream.settings.role === 'partner' && this.#deps.primaries().some((u) => u.settings.wsUrl !== undefined && this.#deps.healthy(u))) this.#move('a primary is back');
  }

  #move(reason: string): void {
    if (this.#closed || this.#moving) return;
    this.#moving = true;
    const from = this.#serving?.upstream;
    this.#release();
    this.#deps.logger.warn({ stream: this.key, upstream: from?.name, reason }, 'moving a subscription stream to another node');
    const attempt = (): void => {
      this.#subscribe(from).then(() => {
        this.#moving = false;
        const ask = this.#ask();
        if (ask !== undefined) this.#run(() => this.#continuity.resumed(ask));
      }, () => {
        if (this.#closed) return;
        // No node can serve now: try again on the next health check.
        setTimeout(attempt, this.#deps.healthCheckMs).unref();
      });
    };
    attempt();
  }
}
