import type { ClientSocket } from '../client-socket.js';
import { ContextKey, Errors, GatewayError, isPromise, type RequestContext, keyOf, planOf } from '../../../core/plugin-api.js';
import type { StreamRequest, SubscriptionMethod, SubscriptionSupport } from '../../../core/family-api.js';
import { type ApiKeyRecord, type Plan } from '../../../core/store-api.js';
import { type EventCharge, type GatewayRuntime, type MeteredEvent } from '../../../core/transport-api.js';
import type { HubMember, StreamHub } from './stream-hub.js';
import type { SubscriptionService } from './subscription-service.js';
import { eventCredits, type SubscriptionSettings } from './settings.js';
import { EXHAUSTED_REASON, exhaustedReason } from '../exhausted-reason.js';

/** Where a connection keeps its subscriptions, in the connection state every call made on it carries. */
export const SUBSCRIPTION_SESSION = new ContextKey<SubscriptionSession>('ws.subscriptions');

/** Below this many bytes waiting in the socket, notifications are charged and written straight to it. */
const SOCKET_LOW_WATER = 64 * 1024;
/** At most this many bytes of notifications are charged in one debit (and written at once). */
const BATCH_BYTES = 256 * 1024;

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
  /**
   * `maxRefusedInRow` subscribes in a row were refused: a client that resubscribes at once after each
   * refusal (`@solana/web3.js` 1.x does) then waits for its reconnection delay instead (mirrors HTTP 429).
   */
  REFUSED_IN_ROW: 4429,
});

/** One client subscription: a member of a hub, charged per event it is sent. */
export class ClientSubscription implements HubMember {
  /** The id the connection keeps it by: the wire id's text (`0x` and 32 hex digits as geth makes them, or a number's digits). */
  readonly id: string;
  /** The id as the client gets it: a string (`hex`) or a number (`integer`), per the family's {@link SubscriptionSupport.ids}. */
  readonly wireId: string | number;
  /** The shared stream feeding it. */
  readonly hub: StreamHub;
  /** The kind of events (`newHeads`, `logs`, `slotNotification`...). */
  readonly kind: string;
  /** What usage records its events under (`eth_subscription:newHeads`, `slotNotification`). */
  readonly usageMethod: string;
  readonly #session: SubscriptionSession;
  /** The notification's bytes before the event's `result`: all that differs between the subscribers of one event. */
  readonly #prefix: Buffer;
  /** The family's credits per event of this kind, when no setting replaces them. */
  readonly #defaultCredits: number;
  #creditsPlan = '';
  #credits = 0;

  constructor(session: SubscriptionSession, hub: StreamHub, support: SubscriptionSupport, method: SubscriptionMethod, kind: string, wireId: string | number) {
    this.wireId = wireId;
    this.id = String(wireId);
    this.hub = hub;
    this.kind = kind;
    this.#session = session;
    this.#defaultCredits = support.eventCredits[kind] ?? 0;
    this.usageMethod = kind === method.notification ? kind : `${method.notification}:${kind}`;
    this.#prefix = Buffer.from(`{"jsonrpc":"2.0","method":"${method.notification}","params":{"subscription":${JSON.stringify(wireId)},"result":`);
  }

  /** Credits per event under `plan` (the key's plan may change while the subscription is open). */
  creditsFor(settings: SubscriptionSettings, plan: string): number {
    if (plan !== this.#creditsPlan) {
      this.#creditsPlan = plan;
      this.#credits = eventCredits(settings, plan, this.kind, this.#defaultCredits);
    }
    return this.#credits;
  }

  /** Sends one event to the client: its own prefix spliced before the event's bytes, shared by every member. */
  deliver(result: Buffer, last: boolean): void {
    const prefix = this.#prefix;
    this.#session.send(this, Buffer.concat([prefix, result, NOTIFICATION_END], prefix.length + result.length + NOTIFICATION_END.length), last);
  }
}

interface Waiting {
  readonly subscription: ClientSubscription;
  readonly frame: Buffer;
  /** The stream's last event: the subscription ends once it is written. */
  readonly last: boolean;
}

/**
 * The subscriptions of one WebSocket connection.
 *
 * Notifications are charged in batches and written once charged: the notifications that arrive within a
 * turn of the event loop (and those that arrive while a charge is in flight) are charged together, in
 * one debit, so a burst of events costs a few ledger round trips, not one per event. A charge is final
 * only once its notifications were handed to an open socket: when the debit resolves after the
 * connection started closing (a close frame sent or received, a half-close), or the write fails, the
 * batch is refunded, once. A connection that is closing is sent nothing new.
 *
 * While the socket holds little, notifications go to it as soon as they are charged; beyond that they
 * wait in the gateway, and a reader that lets more than `maxQueuedBytes` wait for it (in the socket and
 * queued behind it) is closed with 4408. Notifications waiting only for their charge do not count: a
 * reader that keeps up is never closed for a burst. The others are never held up: a hub hands each
 * member its frame and moves on.
 */
export class SubscriptionSession {
  readonly #service: SubscriptionService;
  readonly #gateway: GatewayRuntime;
  readonly #socket: ClientSocket;
  readonly #closeConnection: CloseConnection;
  readonly #cork: CorkConnection | undefined;
  readonly #subscriptions = new Map<string, ClientSubscription>();
  /** Subscribes between their cap check and their answer. */
  #opening = 0;
  /** Subscribes refused since the last one accepted. */
  #refusedInRow = 0;
  #queue: Waiting[] = [];
  #queuedBytes = 0;
  #charging = false;
  #scheduled = false;
  /** The balance ran out: the batch being charged is the last one, then the connection closes with 4402. */
  #last = false;
  #closed = false;
  #key: ApiKeyRecord | undefined;
  #plan: Plan | undefined;
  #network = '';
  readonly #turn = (): void => {
    this.#scheduled = false;
    this.#pump();
  };

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

  /** Opens a subscription for the call `ctx` (authenticated, validated, charged) of `method`; resolves with its id as the client gets it. */
  async subscribe(ctx: RequestContext, support: SubscriptionSupport, method: SubscriptionMethod, request: StreamRequest, eligible: boolean): Promise<string | number> {
    try {
      const id = await this.#open(ctx, support, method, request, eligible);
      this.#refusedInRow = 0;
      return id;
    } catch (error) {
      const max = this.#service.settings.maxRefusedInRow;
      if (++this.#refusedInRow >= max) this.#end(SubscriptionCloseCodes.REFUSED_IN_ROW, `${max} subscriptions refused in a row: reconnect later`);
      throw error;
    }
  }

  async #open(ctx: RequestContext, support: SubscriptionSupport, method: SubscriptionMethod, request: StreamRequest, eligible: boolean): Promise<string | number> {
    if (this.#closed) throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the connection is closing' });
    const settings = this.#service.settings;
    // Subscribes still opening count: concurrent ones must not all pass the check before any is added.
    const held = this.#subscriptions.size + this.#opening;
    if (held >= settings.maxPerConnection) {
      throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: `subscription limit reached: this connection holds ${held} subscriptions (limit ${settings.maxPerConnection})` });
    }
    const key = keyOf(ctx);
    const plan = planOf(ctx);
    this.#service.reserve(key.id);
    this.#opening++;
    let hub: StreamHub;
    try {
      hub = await this.#service.join(ctx, support, method, request, eligible);
    } catch (error) {
      this.#service.release(key.id);
      throw error;
    } finally {
      this.#opening--;
    }
    if (this.#closed) {
      this.#service.release(key.id);
      throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the connection closed' });
    }
    // A key revoked and re-read mid-connection keeps the record its latest call authenticated with.
    this.#key = key;
    this.#plan = plan;
    this.#network = ctx.network.name;
    const subscription = new ClientSubscription(this, hub, support, method, request.kind, this.#service.newId(support.ids ?? 'hex'));
    this.#subscriptions.set(subscription.id, subscription);
    hub.add(subscription);
    return subscription.wireId;
  }

  /** The key's record changed (a new plan, new settings): the next events are charged under it. */
  rekey(key: ApiKeyRecord, plan: Plan): void {
    if (this.#key === undefined || this.#key.id !== key.id) return;
    this.#key = key;
    this.#plan = plan;
  }

  /**
   * Closes a subscription of this connection (`id` as the client wrote it): true when it held one with
   * that id; otherwise false, or an invalid-params error where the family answers so ({@link SubscriptionSupport.unknownId}).
   */
  unsubscribe(support: SubscriptionSupport, id: unknown): boolean {
    const subscription = typeof id === 'string' || typeof id === 'number' ? this.#subscriptions.get(String(id)) : undefined;
    if (subscription === undefined) {
      if (support.unknownId === 'error') throw new GatewayError(Errors.INVALID_PARAMS, { message: 'Invalid subscription id.' });
      return false;
    }
    this.#drop(subscription);
    return true;
  }

  /** The connection closed (or is closing): every subscription is released, and nothing more is sent. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    // Never charged: nothing to refund.
    this.#queue = [];
    this.#queuedBytes = 0;
    for (const subscription of [...this.#subscriptions.values()]) this.#drop(subscription);
  }

  /** Queues a notification of `subscription`, to be charged and sent with the others of this turn. */
  send(subscription: ClientSubscription, frame: Buffer, last = false): void {
    if (this.#closed) return;
    if (this.#socket.readyState !== this.#socket.OPEN) return this.close();
    this.#queue.push({ subscription, frame, last });
    this.#queuedBytes += frame.length;
    const max = this.#service.settings.maxQueuedBytes;
    if (this.#waitingForClient() > max) return this.#end(SubscriptionCloseCodes.SLOW_CONSUMER, `slow consumer: more than ${max} bytes of notifications waited`);
    if (!this.#scheduled && !this.#charging) {
      this.#scheduled = true;
      setImmediate(this.#turn);
    }
  }

  /** Bytes waiting for the client: those the socket holds, and, when it holds too many to take more, those queued behind it. */
  #waitingForClient(): number {
    if (this.#room()) return this.#socket.bufferedAmount;
    return this.#socket.bufferedAmount + this.#queuedBytes;
  }

  /** Whether the socket holds little enough to take notifications now; held writes are handed to the kernel first. */
  #room(): boolean {
    if (this.#socket.bufferedAmount < SOCKET_LOW_WATER) return true;
    this.#cork?.flush();
    return this.#socket.bufferedAmount < SOCKET_LOW_WATER;
  }

  /** Charges the next batch of waiting notifications, if the socket has room and no charge is in flight. */
  #pump(): void {
    if (this.#closed || this.#charging || this.#queue.length === 0) return;
    if (this.#socket.readyState !== this.#socket.OPEN) return this.close();
    // A full socket: the write callbacks pump again as it drains.
    if (!this.#room()) return;
    const budget = BATCH_BYTES - this.#socket.bufferedAmount;
    const batch: Waiting[] = [];
    let bytes = 0;
    let taken = 0;
    let takenBytes = 0;
    for (const waiting of this.#queue) {
      if (batch.length > 0 && bytes + waiting.frame.length > budget) break;
      taken++;
      takenBytes += waiting.frame.length;
      // An unsubscribed subscription's notifications are dropped, uncharged.
      if (!this.#subscriptions.has(waiting.subscription.id)) continue;
      batch.push(waiting);
      bytes += waiting.frame.length;
    }
    this.#queue = taken === this.#queue.length ? [] : this.#queue.slice(taken);
    this.#queuedBytes -= takenBytes;
    if (batch.length > 0) this.#charge(batch);
    else this.#pump();
  }

  #eventsOf(batch: readonly Waiting[]): MeteredEvent[] {
    const key = this.#key!;
    const plan = this.#plan!;
    const settings = this.#service.settings;
    return batch.map((w) => ({ key, plan, network: this.#network, method: w.subscription.usageMethod, credits: w.subscription.creditsFor(settings, plan.name), bytes: w.frame.length }));
  }

  /** Charges a batch in one debit, then writes it; a refusal sends what the balance still pays for, then closes the connection. */
  #charge(batch: readonly Waiting[]): void {
    const events = this.#eventsOf(batch);
    const charge = this.#gateway.meterEvent(events);
    if (!isPromise(charge)) return this.#settle(batch, events, charge);
    this.#charging = true;
    charge.then(
      (result) => { this.#charging = false; this.#settle(batch, events, result); },
      (error: unknown) => {
        this.#charging = false;
        this.#gateway.logger.error({ err: error }, 'charging subscription events failed');
        this.#end(SubscriptionCloseCodes.CREDITS_EXHAUSTED, 'metering unavailable');
      },
    );
  }

  #settle(batch: readonly Waiting[], events: readonly MeteredEvent[], charge: EventCharge): void {
    if (!charge.ok) return this.#refused(batch, events, charge.remaining + charge.paidRemaining);
    // The connection started closing while the debit was taken: nothing is sent, the debit is given back.
    if (this.#closed || this.#socket.readyState !== this.#socket.OPEN) {
      this.#gateway.refundEvents(charge, events);
      return this.close();
    }
    let failed = false;
    let left = batch.length;
    const written = (error?: Error | null): void => {
      // The batch left in one write: a failure means none of it was taken.
      if (error !== undefined && error !== null && !failed) {
        failed = true;
        this.#gateway.refundEvents(charge, events);
      }
      if (--left === 0) this.#pump();
    };
    this.#cork?.hold();
    for (const waiting of batch) {
      this.#socket.send(waiting.frame, TEXT, written);
      // The node ended the stream with this event: so does the client's subscription (its cap slot is freed).
      if (waiting.last) this.#drop(waiting.subscription);
    }
    if (this.#last) return this.#end(SubscriptionCloseCodes.CREDITS_EXHAUSTED, this.#exhaustedReason());
    this.#pump();
  }

  /** The balances (the day's and the paid one, `remaining` together) cannot pay for the whole batch: send the notifications they still pay for (one more debit), then close with 4402. */
  #refused(batch: readonly Waiting[], events: readonly MeteredEvent[], remaining: number): void {
    let affordable = 0;
    let credits = 0;
    while (affordable < events.length && credits + events[affordable]!.credits <= remaining) credits += events[affordable++]!.credits;
    if (this.#last || affordable === 0 || affordable === batch.length) return this.#end(SubscriptionCloseCodes.CREDITS_EXHAUSTED, this.#exhaustedReason());
    this.#last = true;
    this.#charge(batch.slice(0, affordable));
  }

  /** The 4402 reason: the limit, and the key's top-up hint when the gateway offers one. */
  #exhaustedReason(): string {
    const key = this.#key;
    const plan = this.#plan;
    if (key === undefined || plan === undefined) return EXHAUSTED_REASON;
    return exhaustedReason(this.#gateway, { key, plan, network: this.#network });
  }

  #end(code: number, reason: string): void {
    if (this.#closed) return;
    this.close();
    this.#closeConnection(code, reason);
  }

  #drop(subscription: ClientSubscription): void {
    if (!this.#subscriptions.delete(subscription.id)) return;
    subscription.hub.remove(subscription);
    this.#service.release(this.#key?.id ?? '');
  }
}
