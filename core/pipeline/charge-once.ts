import { createHash } from 'node:crypto';
import { keyOf } from '../context/context-access.js';
import { isPromise } from '../util/maybe-promise.js';
import { step } from './stage-runner.js';
import { type StageDefinition } from '../contracts/stage.js';
import type { RequestContext } from '../contracts/request-context.js';
import type { DedupMarks } from '../contracts/dedup-marks.js';

/** What {@link chargeOnceStage} needs. */
export interface ChargeOnceOptions {
  /** The stage's name (`<family>.resendCharge`). */
  readonly name: string;
  /** The family whose calls it looks at. */
  readonly family: string;
  /** The method whose repeats are charged once. */
  readonly method: string;
  /**
   * What makes two calls the same call (a signed transaction's bytes, its signature), from the validated
   * params; undefined for a call that is never deduplicated.
   */
  readonly identity: (params: unknown) => string | undefined;
  /** The marks of the deployment (resolved on first use: a store plugin may register them after the family). */
  readonly marks: () => DedupMarks;
  /** The window, in milliseconds (read per call: a reload may change it). */
  readonly windowMs: () => number;
}

/** The mark of one call of one key on one network: a digest, so marks stay small whatever the identity's size. */
function markOf(ctx: RequestContext, method: string, identity: string): string {
  const digest = createHash('sha256').update(identity).digest('base64url');
  return `${method}:${ctx.network.name}:${keyOf(ctx).id}:${digest}`;
}

/**
 * A pipeline stage, right before `meter`, that charges a repeated call once: a call of `method` whose
 * identity the key sent on the network within the window is priced at 0 credits (the first call's charge
 * covers it); the first call marks it, and takes its mark back if it is refunded (the gateway failed it),
 * so the next one is charged. Other methods pass untouched. The marks live in `Tokens.DedupMarks`, shared
 * by every worker and instance when a store plugin provides them.
 */
export function chargeOnceStage(options: ChargeOnceOptions): StageDefinition {
  return {
    name: options.name,
    before: 'meter',
    families: [options.family],
    create: ({ clock }) =>
      step((ctx) => {
        if (ctx.call.method !== options.method) return;
        const identity = options.identity(ctx.params);
        if (identity === undefined) return;
        const marks = options.marks();
        const id = markOf(ctx, options.method, identity);
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
