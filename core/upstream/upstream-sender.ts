import { GatewayError } from '../errors/gateway-error.js';
import { Errors } from '../errors/catalog.js';
import type { Network, RequestContext, Upstream, UpstreamReply, UpstreamRequest } from '../types.js';
import { resolveFailoverSettings, type FailoverSettings } from './failover-settings.js';
import { networkUnavailable } from './unavailable.js';
import { asUpstreamFailure, type UpstreamFailure } from './upstream-failure.js';
import type { StageDependencies } from '../pipeline/stage.js';
import { AttemptObserverToken, type AttemptEnd } from './attempt-observer.js';
import { candidatesOf, methodOf } from '../context/context-access.js';
import { requestUpstream } from './request-upstream.js';
import { answerBehind, type BehindAnswer } from '../pipeline/answer-head.js';
import { hedgedAttempt } from '../pipeline/hedge.js';
import type { UpstreamSelector } from './selector.js';
import { Tokens } from '../plugin/plugin.js';
import type { UpstreamBudgets } from './upstream-budgets.js';

/** How many times one call asks a node again whose answers show a rising head still below the floor. */
const MAX_REASKS = 4;

/** An upstream's answer to a request sent by an {@link UpstreamSender}, and the upstream that gave it. */
export interface UpstreamAnswer {
  /** The answer the call's protocol accepted. */
  readonly reply: UpstreamReply;
  /** The upstream that gave it. */
  readonly upstream: Upstream;
}

/**
 * Sends one request for a call to the call's route (`ctx.candidates`) under the network's failover
 * policy, and resolves with the first answer its protocol accepts. `dispatch` sends every call through
 * one; a stage that needs another request for the same call (a follow-up read) builds its own with
 * {@link createUpstreamSender}, so that request meets the same selector, breakers and deadlines.
 */
export type UpstreamSender = (ctx: RequestContext, request: UpstreamRequest) => Promise<UpstreamAnswer>;

/** How an {@link UpstreamSender} sends. */
export interface UpstreamSenderOptions {
  /**
   * Send the request of a call that came in a client batch through the batch (`ctx.batch`), so the
   * batch's calls bound for the same upstream travel together. Only for the call's own request, the one
   * its protocol encodes: `dispatch` sets it.
   */
  readonly batched?: boolean;
  /**
   * Whether a node's "method not found" (-32601) skips it for the method (`failover.methodBanMs`). Default
   * true; false for the gateway's own lookups: a node's refusal of the gateway's request (`latest` on a
   * node with recorded answers only) says nothing of the clients' requests for the method, which must
   * get their own answers.
   */
  readonly learnsMethodBans?: boolean;
}

/**
 * Builds an {@link UpstreamSender} over the gateway's selector, attempt observers and failover settings.
 *
 * - A failure to answer (connect error, reset, timeout, HTTP 5xx or 429, a provider's capacity error) moves
 *   on to the next upstream, within `failover.maxAttempts` primaries and the `failover.deadlineMs` of the
 *   whole request: no attempt starts after the deadline, and an attempt's timeout is cut to what is left.
 * - A node's own answer, error or not, ends the loop: it is the answer, never a reason to retry; except
 *   "method not found" (-32601): the node does not serve the method, is skipped for it for
 *   `failover.methodBanMs`, and the next node is asked. When no node serves it, the client gets
 *   `METHOD_NOT_FOUND` in the node's words (not charged), not "unavailable"; except for a forwarded call
 *   (a method no family of the network defines), where the last such answer of a node asked for this call
 *   is the call's answer, as any answer of a node to a forwarded call is (and charged like one).
 * - An answer showing a head below the network's head floor is not passed on (see `answerHead`): the same
 *   node is asked once more (the answer may have been read just before the chain moved), then the next
 *   node, else the call ends with `UPSTREAM_BEHIND`.
 * - A request that is not idempotent is never sent again once an upstream may have received it.
 * - A method's own deadline ends the call with the method's error: another node would not do better.
 * - The selector learns every outcome (breakers, counters); a client that went away is no upstream's fault.
 * - An attempt travels by the channel the call's transport offers (`ctx.meta.channel`) when it carries
 *   it, else by the upstream's own request: the rules above hold for both.
 *
 * When nothing answered the promise rejects with `UPSTREAM_UNAVAILABLE` (or `UPSTREAM_TIMEOUT` when the
 * last attempt timed out).
 */
export function createUpstreamSender(deps: StageDependencies, options: UpstreamSenderOptions = {}): UpstreamSender {
  const batched = options.batched === true;
  const learnsMethodBans = options.learnsMethodBans !== false;
  const { selector, logger, config, container, clock } = deps;
  // Store plugins replace the default before the gateway starts: resolved on first use.
  let upstreamBudgets: UpstreamBudgets | undefined;
  const budgets = (): UpstreamBudgets => (upstreamBudgets ??= container.resolve(Tokens.UpstreamBudgets));
  const observers = container.isRegistered(AttemptObserverToken, true) ? container.resolveAll(AttemptObserverToken) : [];
  const observe = (ctx: RequestContext, upstream: Upstream): AttemptEnd | undefined => {
    if (observers.length === 0) return undefined;
    const ends = observers.map((observer) => observer.attemptStarted(ctx, upstream));
    let done = false;
    return (failure) => {
      if (done) return;
      done = true;
      for (const end of ends) end(failure);
    };
  };
  const policies = new WeakMap<Network, FailoverSettings>();
  const policyOf = (network: Network): FailoverSettings => {
    let policy = policies.get(network);
    if (policy === undefined) {
      policy = resolveFailoverSettings(config, network.config);
      policies.set(network, policy);
    }
    return policy;
  };

  return async (ctx, request) => {
    const method = methodOf(ctx);
    const network = ctx.network;
    const protocol = network.protocol;
    const idempotent = method.idempotent !== false;
    const policy = policyOf(network);
    const candidates = candidatesOf(ctx);
    const signal = ctx.cancelSignal;
    const startedAt = performance.now();
    const deadline = startedAt + policy.deadlineMs;
    let primaries = 0;
    let last: UpstreamFailure | undefined;
    let resendRefused = false;
    let behind: BehindAnswer | undefined;
    // An upstream whose answer showed a head below the floor is asked again before the next one: once,
    // and again while each answer shows a higher head than the last (the node is moving), up to a bound.
    let reasked: Upstream | undefined;
    let reasks = 0;
    // "Method not found" from every upstream that could be asked: the node's words, for the client.
    let notServed: string | undefined;
    // A forwarded call (a method no family defines) has no gateway verdict to give: a node's "method not
    // found" is that node's answer, kept to pass on (and charge) when no other node serves the method.
    const forwardedCall = !network.methods.has(method.name);
    let notServedAnswer: UpstreamAnswer | undefined;
    let otherFailure = false;
    let overBudget = false;
    // An upstream a hedge already asked is not asked again.
    let hedgedTo: Upstream | undefined;
    const viaBatch = batched && ctx.batch !== undefined;
    const hedging = policy.hedge.enabled && idempotent && !viaBatch && candidates.length > 1;
    for (let i = 0; i < candidates.length; i++) {
      let upstream = candidates[i]!;
      if (signal.aborted) break;
      if (upstream === hedgedTo) continue;
      const primary = upstream.settings.role === 'primary';
      if (primary && primaries >= policy.maxAttempts) continue;
      const banned = selector.methodBan?.(upstream, method.name);
      if (banned !== undefined) {
        notServed ??= banned;
        continue;
      }
      const now = i === 0 ? startedAt : performance.now();
      const remaining = deadline - now;
      if (remaining <= 0) break;
      // Admit before budget: an upstream the selector refuses now (a half-open partner whose trial another
      // call holds) is not sent this call, so its budget is not charged for it.
      if (selector.admit !== undefined && !selector.admit(upstream, ctx)) continue;
      const budget = upstream.settings.budget;
      if (budget !== undefined && !(await budgets().take({ network: network.name, upstream: upstream.name, budget, credits: method.credits, nowMs: clock.now() }))) {
        // Nothing is sent: what admit claimed for this attempt (a half-open trial) is given back.
        selector.release?.(upstream, ctx);
        overBudget = true;
        continue;
      }
      const own = method.timeoutMs ?? request.timeoutMs ?? upstream.settings.timeoutMs;
      const cut = remaining < own;
      if (primary) primaries++;
      ctx.attempts++;
      let failure: UpstreamFailure | undefined;
      const ended = observe(ctx, upstream);
      let sentAt = now;
      try {
        const timeoutMs = cut ? Math.max(1, Math.floor(remaining)) : own;
        let reply: UpstreamReply;
        if (hedging && ctx.attempts === 1) {
          // Hedged read: a second primary is asked too when the first is slow; the first answer wins.
          const outcome = await hedgedAttempt({ upstream, send: (s) => requestUpstream(ctx, upstream, request, timeoutMs, s) }, {
            signal,
            delayMs: hedgeDelay(policy, candidates, selector),
            inspect: (r) => protocol.inspect(r, ctx),
            second: () => {
              const next = hedgeTarget(candidates, i, method.name, selector, ctx);
              if (next === undefined) return undefined;
              hedgedTo = next;
              primaries++;
              ctx.attempts++;
              return { upstream: next, send: (s) => requestUpstream(ctx, next, request, Math.max(1, Math.floor(deadline - performance.now())), s) };
            },
            legFailed: (leg, legFailure) => selector.onFailure?.(leg, legFailure),
          });
          upstream = outcome.upstream;
          sentAt = outcome.startedAt;
          if ('error' in outcome) throw outcome.error;
          reply = outcome.reply;
        } else {
          reply = await (viaBatch ? ctx.batch!.send(ctx, upstream, request, timeoutMs, signal) : requestUpstream(ctx, upstream, request, timeoutMs, signal));
        }
        failure = protocol.inspect(reply, ctx);
        ended?.(failure);
        if (forwardedCall && failure?.kind === 'unsupported') notServedAnswer = { reply, upstream };
        if (failure === undefined) {
          selector.onSuccess?.(upstream, performance.now() - sentAt);
          // An answer that would show the client an older head than one already shown is no answer:
          // the node is healthy but behind, so the next node is asked and no breaker counts it.
          const older = method.answerHead === undefined ? undefined : answerBehind(ctx, upstream, reply, selector);
          if (older === undefined) return { reply, upstream };
          const previous = behind;
          behind = older;
          logger.debug({ call: ctx.id, network: network.name, upstream: upstream.name, head: older.head, floor: older.floor }, 'upstream answer behind the head floor');
          // Answers race: one read before the chain moved may arrive after another that showed the move
          // (a node mining a burst of blocks), and a re-ask may race a later read the same way. The node
          // is asked again, which a node at the head answers at the floor; while it answers higher each
          // time it is catching up and is asked once more; a node truly behind answers the same head
          // again, and the next one is asked.
          const first = reasked === undefined && candidates[i] === upstream;
          const moving = reasked === upstream && previous !== undefined && older.head > previous.head && reasks < MAX_REASKS;
          if ((first || moving) && performance.now() < deadline) {
            reasked = upstream;
            reasks++;
            if (primary) primaries--;
            i--;
          }
          continue;
        }
      } catch (error) {
        failure = asUpstreamFailure(error);
        ended?.(failure);
      }
      // The node does not serve the method: no health failure; the next node may serve it.
      if (failure.kind === 'unsupported') {
        if (learnsMethodBans) selector.onMethodNotFound?.(upstream, method.name, failure.message);
        notServed = failure.message;
        continue;
      }
      last = failure;
      otherFailure = true;
      // The client went away: nothing to answer, and no upstream to blame.
      if (signal.aborted) break;
      if (failure.kind === 'timeout' && !cut && method.timeoutMs !== undefined && method.onTimeout !== undefined) {
        // The method's own deadline ran out: the query is too heavy, another node would not do better.
        throw method.onTimeout();
      }
      // A timeout cut short by the call's deadline says nothing about the upstream.
      if (!(cut && failure.kind === 'timeout')) selector.onFailure?.(upstream, failure);
      logger.warn({ call: ctx.id, network: network.name, upstream: upstream.name, failure: failure.kind, reason: failure.message }, 'upstream attempt failed');
      if (failure.maybeReceived && !idempotent) {
        resendRefused = true;
        break;
      }
    }
    if (signal.aborted) throw new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away', cause: last });
    if (notServed !== undefined && !otherFailure && behind === undefined) {
      if (notServedAnswer !== undefined) return notServedAnswer;
      throw new GatewayError(Errors.METHOD_NOT_FOUND, { message: notServed });
    }
    if (behind !== undefined) {
      throw new GatewayError(Errors.UPSTREAM_BEHIND, {
        message: `no node of ${network.name} that could answer has reached head ${behind.floor} yet (the closest is at ${behind.head})`,
        headers: { 'retry-after': '1' },
      });
    }
    if (last?.kind === 'timeout') {
      throw new GatewayError(Errors.UPSTREAM_TIMEOUT, { message: `no upstream of ${network.name} answered in time`, cause: last });
    }
    if (overBudget && last === undefined) {
      throw networkUnavailable(network, selector, `every upstream of ${network.name} that could serve the call is over its own budget`);
    }
    if (resendRefused) {
      throw networkUnavailable(
        network,
        selector,
        `the node failed after it may have received the call; ${method.name} is not sent twice: check its effect before sending it again`,
        last,
      );
    }
    throw networkUnavailable(network, selector, undefined, last);
  };
}

/**
 * How long a hedged read waits for its first upstream before asking a second: `latencyMultiplier` times
 * the lowest measured latency among the call's upstreams, at least `minDelayMs`.
 */
function hedgeDelay(policy: FailoverSettings, candidates: readonly Upstream[], selector: UpstreamSelector): number {
  let fastest = Infinity;
  for (const upstream of candidates) {
    const latency = selector.latencyMs?.(upstream);
    if (latency !== undefined && latency < fastest) fastest = latency;
  }
  const derived = fastest === Infinity ? 0 : fastest * policy.hedge.latencyMultiplier;
  return Math.max(policy.hedge.minDelayMs, Math.ceil(derived));
}

/**
 * The upstream a hedge goes to: the next primary after `from` that serves the method, has no budget
 * (a hedge never spends a provider's plan) and is admitted by the selector now.
 */
function hedgeTarget(candidates: readonly Upstream[], from: number, method: string, selector: UpstreamSelector, ctx: RequestContext): Upstream | undefined {
  for (let k = from + 1; k < candidates.length; k++) {
    const upstream = candidates[k]!;
    if (upstream.settings.role !== 'primary' || upstream.settings.budget !== undefined) continue;
    if (selector.methodBan?.(upstream, method) !== undefined) continue;
    if (selector.admit !== undefined && !selector.admit(upstream, ctx)) continue;
    return upstream;
  }
  return undefined;
}
