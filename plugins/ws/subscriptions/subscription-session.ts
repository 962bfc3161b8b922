import { randomBytes } from 'node:crypto';
import type { ClientSocket } from '../client-socket.js';
import { ContextKey, Errors, GatewayError, isPromise, type ApiKeyRecord, type EventCharge, type GatewayRuntime, type Plan, type RequestContext, type StreamRequest, type SubscriptionSupport, keyOf, planOf } from '../../../core/index.js';
import type { HubMember, StreamHub } from './stream-hub.js';
import type { SubscriptionService } from './subscription-service.js';
import { eventCredits } from './settings.js';

/** Where a connection keeps its subscriptions, in the connection state every call made on it carries. */
export const SUBSCRIPTION_SESSION = new ContextKey<SubscriptionSession>('ws.subscriptions');

/** Below this many bytes waiting in the socket, notifications are written straight to it. */
const SOCKET_LOW_WATER = 64 * 1024;

/** How a session ends its connection (the transport's close: a close frame, then a cut after a grace time). */
export type CloseConnection = (code: number, reason: string) => void;

/** The connection's write batching: one event's notifications to a connection leave in one system call. */
export interface CorkConnection {
  /** Holds the connection's writes until the next tick. */
  hold(): void;
  /** Writes what is held now (the session's low-water mark is about what the kernel did not take, not what waits for the tick). */
  flush(): void;
}

/** `ws` sends a Buffer as a binary frame unless told otherwise; notifications travel in text frames. */
const TEXT: { readonly binary: false } = { binary: false };
const NOTIFICATION_END = Buffer.from('}}');

/** Close codes of subscription connections. */
export const SubscriptionCloseCodes = Object.freeze({
  /** The client read too slowly: more than `maxQueuedBytes` of notifications waited for it. */
  SLOW_CONSUMER: 4408,
  /** The key's daily balance cannot pay for the next event (mirrors HTTP 402). */
  CREDITS_EXHAUSTED: 4402,
});

/** One client subscription: a member of a hub, charged per event it is sent. */
export class ClientSubscription implements HubMember {
  /** The id the client knows it by (`0x` and 32 hex digits, as geth makes them). */
  readonly id: string;
  /** The shared stream feeding it. */
  readonly hub: StreamHub;
  readonly #session: SubscriptionSession;
  /** The notification's bytes before the event's `result`: all that differs between the subscribers of one event. */
  readonly #prefix: Buffer;
  /** Credits per event, for the key's plan. */
  readonly credits: number;
  /** What usage records its events under (`eth_subscription:newHeads`). */
  readonly usageMethod: string;

  constructor(session: SubscriptionSession, hub: StreamHub, support: SubscriptionSupport, kind: string, credits: number) {
    this.id = `0x${randomBytes(16).toString('hex')}`;
    this.hub = hub;
    this.#session = session;
    this.credits = credits;
    this.usageMethod = `${support.notification}:${kind}`;
    this.#prefix = Buffer.from(`{"jsonrpc":"2.0","method":"${support.notification}","params":{"subscription":"${this.id}","result":`);
  }

  /** Sends one event to the client: its own prefix spliced before the event's bytes, shared by every member. */
  deliver(result: Buffer): void {
    const prefix = this.#prefix;
    this.#session.send(this, Buffer.concat([prefix, result, NOTIFICATION_END], prefix.length + result.length + NOTIFICATION_END.length));
  }
}

interface Waiting {
  readonly subscription: ClientSubscription;
  readonly frame: Buffer;
}

/**
 * The subscriptions of one WebSocket connection. Notifications are charged as they are written to the
 * socket: one the gateway had to drop (a slow reader, a closed connection) costs nothing. While the
 * socket holds little, they go straight to it; beyond that they wait in a bounded queue, and a reader
 * that lets more than `maxQueuedBytes` wait is closed with 4408. The others are never held up: a hub
 * hands each member its frame and moves on.
 */
export class SubscriptionSession {
  readonly #service: SubscriptionService;
  readonly #gateway: GatewayRuntime;
  readonly #socket: ClientSocket;
  readonly #closeConnection: CloseConnection;
  readonly #cork: CorkConnection | undefined;
  readonly #subscriptions = new Map<string, ClientSubscription>();
  readonly #queue: Waiting[] = [];
  #queuedBytes = 0;
  #charging = false;
  #closed = false;
  #key: ApiKeyRecord | undefined;
  #plan: Plan | undefined;
  #network = '';
  readonly #written = (): void => { if (this.#queue.length > 0) this.#pump(); };

  constructor(service: SubscriptionService, gateway: GatewayRuntime, socket: ClientSocket, closeConnection: CloseConnection, cork?: CorkConnection) {
    this.#service = service;
    this.#gateway = gateway;
    this.#socket = socket;
    this.#closeConnection = closeConnection;
    this.#cork = cork;
  }

  /** Subscriptions held. */
  get size(): number {
    return this.#subscriptions.size;
  }

  /** Opens a subscription for the call `ctx` (authenticated, validated, charged); resolves with its id. */
  async subscribe(ctx: RequestContext, support: SubscriptionSupport, request: StreamRequest, eligible: boolean): Promise<string> {
    if (this.#closed) throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the connection is closing' });
    const settings = this.#service.settings;
    if (this.#subscriptions.size >= settings.maxPerConnection) {
      throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: `subscription limit reached: this connection holds ${this.#subscriptions.size} subscriptions (limit ${settings.maxPerConnection})` });
    }
    const key = keyOf(ctx);
    const plan = planOf(ctx);
    this.#service.reserve(key.id);
    let hub: StreamHub;
    try {
      hub = await this.#service.join(ctx, support, request, eligible);
    } catch (error) {
      this.#service.release(key.id);
      throw error;
    }
    if (this.#closed) {
      this.#service.release(key.id);
      throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the connection closed' });
    }
    // A key revoked and re-read mid-connection keeps the record its latest call authenticated with.
    this.#key = key;
    this.#plan = plan;
    this.#network = ctx.network.name;
    const credits = eventCredits(settings, plan.name, request.kind, support.eventCredits[request.kind] ?? 0);
    const subscription = new ClientSubscription(this, hub, support, request.kind, credits);
    this.#subscriptions.set(subscription.id, subscription);
    hub.add(subscription);
    return subscription.id;
  }

  /** Closes a subscription of this connection: false when it holds none with that id. */
  unsubscribe(id: string): boolean {
    const subscription = this.#subscriptions.get(id);
    if (subscription === undefined) return false;
    this.#drop(subscription);
    return true;
  }

  /** The connection closed: every subscription is released. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#queue.length = 0;
    this.#queuedBytes = 0;
    for (const subscription of [...this.#subscriptions.values()]) this.#drop(subscription);
  }

  /** Sends (or queues) a notification of `subscription`. */
  send(subscription: ClientSubscription, frame: Buffer): void {
    if (this.#closed) return;
    if (this.#queue.length === 0 && !this.#charging && this.#room()) {
      this.#charge(subscription, frame);
      return;
    }
    this.#queue.push({ subscription, frame });
    this.#queuedBytes += frame.length;
    if (this.#queuedBytes > this.#service.settings.maxQueuedBytes) this.#end(SubscriptionCloseCodes.SLOW_CONSUMER, `slow consumer: more than ${this.#service.settings.maxQueuedBytes} bytes of notifications waited`);
  }

  #pump(): void {
    while (!this.#closed && !this.#charging && this.#queue.length > 0 && this.#room()) {
      const next = this.#queue.shift()!;
      this.#queuedBytes -= next.frame.length;
      this.#charge(next.subscription, next.frame);
    }
  }

  /** Whether the socket holds little enough to take a notification now; held writes are handed to the kernel first. */
  #room(): boolean {
    if (this.#socket.bufferedAmount < SOCKET_LOW_WATER) return true;
    this.#cork?.flush();
    return this.#socket.bufferedAmount < SOCKET_LOW_WATER;
  }

  /** Charges a notification, then writes it; a refusal closes the connection after what was already paid for. */
  #charge(subscription: ClientSubscription, frame: Buffer): void {
    if (!this.#subscriptions.has(subscription.id)) return;
    const charge = this.#gateway.meterEvent({ key: this.#key!, plan: this.#plan!, network: this.#network, method: subscription.usageMethod, credits: subscription.credits, bytes: frame.length });
    if (!isPromise(charge)) return this.#write(charge, frame);
    this.#charging = true;
    charge.then(
      (result) => { this.#charging = false; this.#write(result, frame); this.#pump(); },
      (error: unknown) => {
        this.#charging = false;
        this.#gateway.logger.error({ err: error }, 'charging a subscription event failed');
        this.#end(SubscriptionCloseCodes.CREDITS_EXHAUSTED, 'metering unavailable');
      },
    );
  }

  #write(charge: EventCharge, frame: Buffer): void {
    if (this.#closed) return;
    if (!charge.ok) return this.#end(SubscriptionCloseCodes.CREDITS_EXHAUSTED, 'daily credit limit reached');
    this.#cork?.hold();
    this.#socket.send(frame, TEXT, this.#written);
  }

  #end(code: number, reason: string): void {
    if (this.#closed) return;
    this.close();
    this.#closeConnection(code, reason);
  }

  #drop(subscription: ClientSubscription): void {
    this.#subscriptions.delete(subscription.id);
    subscription.hub.remove(subscription);
    this.#service.release(this.#key?.id ?? '');
  }
}
