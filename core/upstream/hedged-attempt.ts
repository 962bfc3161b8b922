import type { Upstream, UpstreamReply } from '../contracts/upstream.js';
import { CancelToken } from '../context/cancel-signal.js';
import { type CancelSignal } from '../contracts/cancel-signal.js';
import { asUpstreamFailure } from './classify-failure.js';
import { type UpstreamFailure } from '../contracts/upstream-failure.js';

/** One attempt a hedge may start: its upstream, and how to send to it under a signal of its own. */
export interface HedgeLeg {
  /** The upstream. */
  readonly upstream: Upstream;
  /** Sends the request; the leg is cancelled through `signal`. */
  send(signal: CancelSignal): Promise<UpstreamReply>;
}

/** How a hedged attempt ended: the winning leg's reply, or the failure of the leg that had to answer. */
export type HedgeOutcome =
  | { readonly upstream: Upstream; readonly reply: UpstreamReply; readonly startedAt: number }
  | { readonly upstream: Upstream; readonly error: unknown; readonly startedAt: number };

/** What a hedged attempt needs from the sender. */
export interface HedgeOptions {
  /** The call's own cancellation: cancels both legs. */
  readonly signal: CancelSignal;
  /** How long the first leg may take before the second starts, ms. */
  readonly delayMs: number;
  /** Whether a reply is an answer (undefined) or a failure worth waiting for the other leg. */
  readonly inspect: (reply: UpstreamReply) => UpstreamFailure | undefined;
  /** The second leg, asked for when the delay ran out (undefined: none may take the call). */
  readonly second: () => HedgeLeg | undefined;
  /** A leg that failed on its own while the other went on: a real failure, for the selector. */
  readonly legFailed: (upstream: Upstream, failure: UpstreamFailure) => void;
}

/**
 * Sends a read to `first`; when it has not answered after `delayMs`, sends it to a second upstream too.
 * The first answer wins and the other leg is cancelled (its request aborted): a cancelled leg is no
 * failure of its upstream. A leg that fails while the other runs is reported through `legFailed`, and
 * the other leg's outcome is the attempt's. Nothing is hedged once the first leg has ended.
 */
export function hedgedAttempt(first: HedgeLeg, options: HedgeOptions): Promise<HedgeOutcome> {
  return new Promise<HedgeOutcome>((resolve) => {
    const legs: Array<{ leg: HedgeLeg; token: CancelToken; done: boolean }> = [];
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const onCallCancelled = (): void => {
      for (const l of legs) l.token.abort(options.signal.reason);
    };
    options.signal.addEventListener('abort', onCallCancelled, { once: true });
    const finish = (outcome: HedgeOutcome): void => {
      if (settled) return;
      settled = true;
      if (timer !== undefined) clearTimeout(timer);
      options.signal.removeEventListener('abort', onCallCancelled);
      // The loser is cancelled: its request aborted, its outcome ignored.
      for (const l of legs) if (!l.done) l.token.abort(new Error('hedge lost'));
      resolve(outcome);
    };
    const start = (leg: HedgeLeg): void => {
      const entry = { leg, token: new CancelToken(), done: false };
      const startedAt = performance.now();
      legs.push(entry);
      if (options.signal.aborted) entry.token.abort(options.signal.reason);
      leg.send(entry.token).then(
        (reply) => {
          entry.done = true;
          if (settled) return;
          const failure = options.inspect(reply);
          if (failure === undefined || !otherRunning(entry)) return finish({ upstream: leg.upstream, reply, startedAt });
          options.legFailed(leg.upstream, failure);
        },
        (error: unknown) => {
          entry.done = true;
          if (settled) return;
          if (!otherRunning(entry)) return finish({ upstream: leg.upstream, error, startedAt });
          if (!entry.token.aborted) options.legFailed(leg.upstream, asUpstreamFailure(error));
        },
      );
    };
    const otherRunning = (self: { done: boolean }): boolean => legs.some((l) => l !== self && !l.done);
    start(first);
    timer = setTimeout(() => {
      timer = undefined;
      if (settled || options.signal.aborted) return;
      const second = options.second();
      if (second !== undefined) start(second);
    }, options.delayMs);
    timer.unref?.();
  });
}
