/**
 * One charge for a transaction sent again: the same signed bytes sent by the same key on the same network
 * within the resend window are one transaction, answered with one hash (see `resent-transaction.ts`), so
 * they are charged once, in every worker and instance of a deployment (through `Tokens.DedupMarks`).
 *
 * @module
 */
import { createHash } from 'node:crypto';
import { isPromise, keyOf, step, type DedupMarks, type RequestContext, type StageDefinition } from '../../core/plugin-api.js';
import { EVM_FAMILY_NAME } from './family.js';

/** The method whose repeats are charged once. */
const SEND_RAW = 'eth_sendRawTransaction';

/** What {@link resendChargeStage} needs. */
export interface ResendChargeOptions {
  /** The marks of the deployment (resolved on first use: a store plugin may register them after this one). */
  readonly marks: () => DedupMarks;
  /** The window, in milliseconds (read per call: a reload may change it). */
  readonly windowMs: () => number;
}

/** The mark of one signed transaction of one key on one network: a digest, so marks stay small whatever the transaction's size. */
function markOf(ctx: RequestContext, raw: string): string {
  const digest = createHash('sha256').update(raw.toLowerCase()).digest('base64url');
  return `${SEND_RAW}:${ctx.network.name}:${keyOf(ctx).id}:${digest}`;
}

/**
 * The pipeline stage, right before `meter`: an `eth_sendRawTransaction` whose signed bytes the key sent
 * on the network within the window is priced at 0 credits (the first send's charge covers it); the first
 * send marks them, and takes its mark back if it is refunded (the gateway failed it), so the next send is
 * charged. Other methods, and malformed params (refused before this stage), pass untouched.
 */
export function resendChargeStage(options: ResendChargeOptions): StageDefinition {
  return {
    name: 'evm.resendCharge',
    before: 'meter',
    families: [EVM_FAMILY_NAME],
    create: ({ clock }) =>
      step((ctx) => {
        if (ctx.call.method !== SEND_RAW || !Array.isArray(ctx.params) || typeof ctx.params[0] !== 'string') return;
        const marks = options.marks();
        const id = markOf(ctx, ctx.params[0]);
        const settle = (first: boolean): void => {
          if (first) ctx.compensations.push(() => marks.unmark(id));
          else ctx.credits = 0;
        };
        const first = marks.mark(id, options.windowMs(), clock.now());
        if (isPromise(first)) return first.then(settle);
        settle(first);
      }),
  };
}
