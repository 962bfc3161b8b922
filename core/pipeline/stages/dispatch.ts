import type { CallBatch, RequestContext } from '../../contracts/request-context.js';
import { step } from '../stage-runner.js';
import { type Stage, type StageDependencies } from '../../contracts/stage.js';
import { createUpstreamSender } from '../../upstream/upstream-sender.js';
import { settleNodeError } from '../node-error.js';

/**
 * Sends the call to the route's upstreams in order until one answers.
 *
 * - A failure to answer (connect error, reset, timeout, HTTP 5xx or 429, a provider's capacity error) moves
 *   on to the next upstream, within `failover.maxAttempts` primaries and the `failover.deadlineMs` of the
 *   whole call: no attempt starts after the deadline, and an attempt's timeout is cut to what is left.
 *   Partners, present only for eligible calls, come after the primaries.
 * - A node's own answer, error or not (a revert, invalid params, an empty `[]` or `null`), ends the loop:
 *   it is the call's answer, never a reason to retry.
 * - A call that is not idempotent (`eth_sendRawTransaction`) is never sent again once an upstream may have
 *   received it; a refusal before the node ran it (connect error, HTTP 429, a capacity error) may move on.
 * - A method's own deadline (`eth_getLogs`: 10 s) ends the call with the method's error: another node
 *   would not do better.
 * - A node's error answer is read by the method's `onNodeError` hook when it has one, which may turn it
 *   into a success (a resent transaction the node already has): see {@link settleNodeError}.
 * - The selector learns every outcome (breakers, counters); a client that went away is no upstream's fault.
 *
 * - The calls of one client batch that reach dispatch for the same upstream go as one upstream batch
 *   request when the protocol can batch (see {@link CallBatch}); each still meets this loop on its own.
 *
 * When nothing answered the call fails with `UPSTREAM_UNAVAILABLE` (or `UPSTREAM_TIMEOUT` when the last
 * attempt timed out), and the pipeline's compensation refunds its credits. Retries cost nothing extra.
 */
export function dispatch(deps: StageDependencies): Stage {
  const send = createUpstreamSender(deps, { batched: true });
  const attempt = async (ctx: RequestContext): Promise<void> => {
    const { reply, upstream } = await send(ctx, ctx.network.protocol.encode(ctx));
    ctx.reply = ctx.method?.onNodeError === undefined ? reply : await settleNodeError(ctx, upstream, reply, deps.logger);
    ctx.servedBy = upstream;
  };
  // An answered call returns synchronously: no promise, no extra tick.
  return step((ctx) => (ctx.reply === undefined ? attempt(ctx) : undefined));
}
