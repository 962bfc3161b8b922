/**
 * The solana family's subscriptions (`slotSubscribe`, `accountSubscribe`...): methods, prices and
 * continuity across nodes.
 *
 * @module
 */
import type { StreamRequest, SubscriptionMethod, SubscriptionSupport, StreamContinuity } from '../../../core/family-api.js';
import { AccountContinuity } from './account-continuity.js';
import { OrderedSlots } from './ordered-slots.js';
import { SeenEvents } from './seen-events.js';
import { SignatureContinuity } from './signature-continuity.js';
import { blockStream, ROOT_STREAM, SLOT_STREAM } from './slot-streams.js';
import { commitmentOf, solanaStreamRequest } from './stream-request.js';
import { SOLANA_SUBSCRIPTION_METHODS } from './methods.js';

export { SOLANA_SUBSCRIPTION_METHODS, SOLANA_SUBSCRIPTION_DEFINITIONS, SOLANA_SUBSCRIBE_CREDITS, SOLANA_UNSUBSCRIBE_CREDITS, MAX_PROGRAM_FILTERS } from './methods.js';
export { solanaStreamRequest } from './stream-request.js';

/**
 * Credits per delivered notification, by notification method, on one scale (see the README): a clock
 * tick (slot, root, a slot's step, a vote) 1; one record (an account, a program account, a transaction's
 * logs, a signature's outcome) 20, an eighth of an account read; a whole block 300, as an EVM `logs` event.
 */
export const SOLANA_EVENT_CREDITS: Readonly<Record<string, number>> = Object.freeze({
  slotNotification: 1,
  rootNotification: 1,
  slotsUpdatesNotification: 1,
  voteNotification: 1,
  accountNotification: 20,
  programNotification: 20,
  logsNotification: 20,
  signatureNotification: 20,
  blockNotification: 300,
});

type Event = Readonly<Record<string, unknown>> | null;

const field = (event: unknown, ...path: string[]): unknown => path.reduce<unknown>((at, key) => (at as Event)?.[key], event);

/** The continuity keeper of one stream, by its subscribe method. */
function continuity(request: StreamRequest, method: SubscriptionMethod): StreamContinuity {
  const [first, config] = request.params as [unknown, Record<string, unknown> | undefined];
  switch (method.subscribe) {
    case 'accountSubscribe': return new AccountContinuity(first as string, config);
    case 'signatureSubscribe': return new SignatureContinuity(first as string, commitmentOf(request));
    case 'slotSubscribe': return new OrderedSlots(SLOT_STREAM);
    case 'rootSubscribe': return new OrderedSlots(ROOT_STREAM);
    case 'blockSubscribe': return new OrderedSlots(blockStream(first, config ?? {}));
    case 'logsSubscribe': return new SeenEvents((e) => field(e, 'value', 'signature') as string | undefined);
    case 'programSubscribe': return new SeenEvents((e) => `${String(field(e, 'context', 'slot'))}:${String(field(e, 'value', 'pubkey'))}`);
    case 'voteSubscribe': return new SeenEvents((e) => field(e, 'signature') as string | undefined);
    default: return new SeenEvents((e) => `${String(field(e, 'type'))}:${String(field(e, 'slot'))}`);
  }
}

/**
 * The subscription support of the solana family: the nine agave subscriptions, integer ids, an unknown
 * id in an unsubscribe refused with invalid params (as a node does), history reads over HTTP (a node's
 * WebSocket takes no calls), and the notifications priced per method ({@link SOLANA_EVENT_CREDITS}).
 */
export function solanaSubscriptions(): SubscriptionSupport {
  return {
    methods: SOLANA_SUBSCRIPTION_METHODS,
    ids: 'integer',
    unknownId: 'error',
    // An agave node's WebSocket serves subscriptions only: history reads go over HTTP.
    socketCalls: false,
    request: solanaStreamRequest,
    eventCredits: SOLANA_EVENT_CREDITS,
    continuity,
  };
}
