import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import { GatewayError } from '../errors/gateway-error.js';
import type { GatewayConfig } from '../config/types.js';
import type { MethodDefinition, Network, RequestContext } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply, UpstreamRequest } from '../contracts/upstream.js';
import { resolveFailoverSettings, type FailoverSettings } from './failover-settings.js';
import { asUpstreamFailure } from './classify-failure.js';
import { type UpstreamFailure } from '../contracts/upstream-failure.js';
import { AttemptObserverToken, type AttemptEnd } from './attempt-observer.js';
import { candidatesOf, methodOf } from '../context/context-access.js';
import { requestUpstream } from '../context/request-upstream.js';
import { answerBehind } from './answer-head.js';
import { hedgedAttempt } from './hedged-attempt.js';
import { hedgeDelay, hedgeTarget } from './hedge-choice.js';
import type { UpstreamSelector } from '../contracts/selector.js';
import { Tokens } from '../contracts/plugin.js';
import type { UpstreamBudget, UpstreamBudgets } from '../contracts/upstream-budgets.js';
import { sendEnding, type SendRecord } from './send-ending.js';

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
 * What an {@link UpstreamSender} needs of the gateway (a stage's dependencies carry it all): the config
 * (failover settings), the container (attempt observers, the deployment's upstream budgets), the
 * selector, the clock (budget days) and the logger.
 */
export interface UpstreamSenderDependencies {
  /** The resolved config: its `failover` section and each network's own. */
  readonly config: GatewayConfig;
  /** The gateway's container: attempt observers and `Tokens.UpstreamBudgets`. */
  readonly container: DependencyContainer;
  /** Upstream choice: admits each attempt and learns its outcome. */
  readonly selector: UpstreamSelector;
  /** The gateway's clock, for the budgets' seconds and days. */
  readonly clock: {
    /** Now, ms since the epoch. */
    now(): number;
  };
  /** Logs. */
  readonly logger: Logger;
}

/**
 * One call's sending: what is fixed for the call, what its attempts have met (the {@link SendRecord} its
 * ending is chosen from), and where the loop is. One object per call: the hot path allocates no more.
 */
interface Sending extends SendRecord {
  readonly ctx: RequestContext;
  readonly request: UpstreamRequest;
  readonly method: MethodDefinition;
  readonly network: Network;
  readonly policy: FailoverSettings;
  readonly candidates: readonly Upstream[];
  readonly startedAt: number;
  /** When the whole request's `failover.deadlineMs` runs out (monotonic ms). */
  readonly deadline: number;
  readonly idempotent: boolean;
  /** A method no family of the network defines: a node's "method not found" is an answer to pass on. */
  readonly forwardedCall: boolean;
  readonly viaBatch: boolean;
  readonly hedging: boolean;
  /** Primaries asked so far (at most `failover.maxAttempts`). */
  primaries: number;
  /** An upstream a hedge already asked is not asked again. */
  hedgedTo: Upstream | undefined;
  /** The upstream asked again for an answer behind the head floor, and how many times. */
  reasked: Upstream | undefined;
  reasks: number;
}

/** One attempt: the upstream that gave its outcome (a hedge's winner), and the outcome once known. */
interface Attempt {
  upstream: Upstream;
  /** Whether the candidate asked (not a hedge's second leg) is a primary. */
  readonly primary: boolean;
  /** The attempt's timeout, ms. */
  readonly timeoutMs: number;
  /** The attempt's timeout was cut to what was left of the deadline. */
  readonly cut: boolean;
  sentAt: number;
  reply: UpstreamReply | undefined;
  failure: UpstreamFailure | undefined;
  readonly ended: AttemptEnd | undefined;
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
 * Each candidate meets the policies in this order: the limits of the route (`failover.maxAttempts`, the
 * deadline), (1) the method ban, (2) the selector's `admit`, (3) the upstream's own budget, taken only
 * for an attempt about to be sent (a refused budget gives back what `admit` claimed, through the
 * selector's `release`), (4) the send, hedged for an idempotent call's first attempt, (5) the answer's
 * head against the floor, (6) the failure's lesson and resend safety.
 *
 * When nothing answered the promise rejects with the first ending that applies, in this order: the
 * client went away; no node serves the method (`METHOD_NOT_FOUND`); an answer was behind the head floor
 * (`UPSTREAM_BEHIND`); the last failure was a timeout (`UPSTREAM_TIMEOUT`); every upstream that could
 * serve was over its budget; a call that is not sent twice; else `UPSTREAM_UNAVAILABLE`.
 */
export function createUpstreamSender(deps: UpstreamSenderDependencies, options: UpstreamSenderOptions = {}): UpstreamSender {
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

  const begin = (ctx: RequestContext, request: UpstreamRequest): Sending => {
    const method = methodOf(ctx);
    const network = ctx.network;
    const idempotent = method.idempotent !== false;
    const policy = policyOf(network);
    const candidates = candidatesOf(ctx);
    const startedAt = performance.now();
    const viaBatch = batched && ctx.batch !== undefined;
    return {
      ctx,
      request,
      method,
      network,
      policy,
      candidates,
      startedAt,
      deadline: startedAt + policy.deadlineMs,
      idempotent,
      forwardedCall: !network.methods.has(method.name),
      viaBatch,
      hedging: policy.hedge.enabled && idempotent && !viaBatch && candidates.length > 1,
      aborted: false,
      last: undefined,
      otherFailure: false,
      behind: undefined,
      notServed: undefined,
      notServedAnswer: undefined,
      overBudget: false,
      resendRefused: false,
      primaries: 0,
      hedgedTo: undefined,
      reasked: undefined,
      reasks: 0,
    };
  };

  // 1. Method ban: a node that answered "method not found" for the method lately is skipped for it.
  const banned = (s: Sending, upstream: Upstream): boolean => {
    const ban = selector.methodBan?.(upstream, s.method.name);
    if (ban === undefined) return false;
    s.notServed ??= ban;
    return true;
  };

  // 3. Budget: taken only for an attempt the selector admitted, right before it is sent. When the budget
  // refuses, nothing is sent and the selector gives back what admit claimed (a half-open trial).
  const withinBudget = async (s: Sending, upstream: Upstream, budget: UpstreamBudget): Promise<boolean> => {
    if (await budgets().take({ network: s.network.name, upstream: upstream.name, budget, credits: s.method.credits, nowMs: clock.now() })) return true;
    selector.release?.(upstream, s.ctx);
    s.overBudget = true;
    return false;
  };

  // 4. Send, hedged for an idempotent call's first attempt: a second primary is asked too when the first
  // is slow, and the first answer wins. `start` counts the attempt; `transmit` is the request's own
  // promise when nothing is hedged, so a plain attempt costs the loop one await.
  const start = (s: Sending, upstream: Upstream, primary: boolean, now: number, remaining: number): Attempt => {
    const { ctx, request, method } = s;
    const own = method.timeoutMs ?? request.timeoutMs ?? upstream.settings.timeoutMs;
    const cut = remaining < own;
    if (primary) s.primaries++;
    ctx.attempts++;
    const ended = observe(ctx, upstream);
    const timeoutMs = cut ? Math.max(1, Math.floor(remaining)) : own;
    return { upstream, primary, timeoutMs, cut, sentAt: now, reply: undefined, failure: undefined, ended };
  };
  const transmit = (s: Sending, attempt: Attempt, i: number): Promise<UpstreamReply> => {
    const { ctx, request } = s;
    const upstream = attempt.upstream;
    if (s.hedging && ctx.attempts === 1) return hedged(s, attempt, i);
    if (s.viaBatch) return ctx.batch!.send(ctx, upstream, request, attempt.timeoutMs, ctx.cancelSignal);
    return requestUpstream(ctx, upstream, request, attempt.timeoutMs, ctx.cancelSignal);
  };
  const hedged = async (s: Sending, attempt: Attempt, i: number): Promise<UpstreamReply> => {
    const { ctx, request, method } = s;
    const first = attempt.upstream;
    const outcome = await hedgedAttempt({ upstream: first, send: (signal) => requestUpstream(ctx, first, request, attempt.timeoutMs, signal) }, {
      signal: ctx.cancelSignal,
      delayMs: hedgeDelay(s.policy, s.candidates, selector),
      inspect: (r) => s.network.protocol.inspect(r, ctx),
      second: () => {
        const next = hedgeTarget(s.candidates, i, method.name, selector, ctx);
        if (next === undefined) return undefined;
        s.hedgedTo = next;
        s.primaries++;
        ctx.attempts++;
        return { upstream: next, send: (signal) => requestUpstream(ctx, next, request, Math.max(1, Math.floor(s.deadline - performance.now())), signal) };
      },
      legFailed: (leg, legFailure) => selector.onFailure?.(leg, legFailure),
    });
    attempt.upstream = outcome.upstream;
    attempt.sentAt = outcome.startedAt;
    if ('error' in outcome) throw outcome.error;
    return outcome.reply;
  };
  // The call's protocol reads the reply: an answer, or a failure to answer.
  const inspected = (s: Sending, attempt: Attempt, reply: UpstreamReply): UpstreamFailure | undefined => {
    const failure = s.network.protocol.inspect(reply, s.ctx);
    attempt.reply = reply;
    attempt.failure = failure;
    attempt.ended?.(failure);
    if (s.forwardedCall && failure?.kind === 'unsupported') s.notServedAnswer = { reply, upstream: attempt.upstream };
    return failure;
  };

  // 5. Answer head: an answer that would show the client an older head than one already shown is no
  // answer: the node is healthy but behind, so it is asked again or the next node is, and no breaker
  // counts it.
  const answerVerdict = (s: Sending, attempt: Attempt, i: number): 'answer' | 'reask' | 'next' => {
    const ctx = s.ctx;
    const upstream = attempt.upstream;
    selector.onSuccess?.(upstream, performance.now() - attempt.sentAt);
    const older = s.method.answerHead === undefined ? undefined : answerBehind(ctx, upstream, attempt.reply!, selector);
    if (older === undefined) return 'answer';
    const previous = s.behind;
    s.behind = older;
    logger.debug({ call: ctx.id, network: s.network.name, upstream: upstream.name, head: older.head, floor: older.floor }, 'upstream answer behind the head floor');
    // Answers race: one read before the chain moved may arrive after another that showed the move (a
    // node mining a burst of blocks), and a re-ask may race a later read the same way. The node is asked
    // again, which a node at the head answers at the floor; while it answers higher each time it is
    // catching up and is asked once more; a node truly behind answers the same head again, and the next
    // one is asked.
    const first = s.reasked === undefined && s.candidates[i] === upstream;
    const moving = s.reasked === upstream && previous !== undefined && older.head > previous.head && s.reasks < MAX_REASKS;
    if ((first || moving) && performance.now() < s.deadline) {
      s.reasked = upstream;
      s.reasks++;
      if (attempt.primary) s.primaries--;
      return 'reask';
    }
    return 'next';
  };

  // 6. A failure to answer, and resend safety: the selector learns it, and a call that is not idempotent
  // is not sent again once a node may have received it.
  const failed = (s: Sending, attempt: Attempt, failure: UpstreamFailure): 'next' | 'stop' => {
    const { ctx, method } = s;
    const upstream = attempt.upstream;
    // The node does not serve the method: no health failure; the next node may serve it.
    if (failure.kind === 'unsupported') {
      if (learnsMethodBans) selector.onMethodNotFound?.(upstream, method.name, failure.message);
      s.notServed = failure.message;
      return 'next';
    }
    s.last = failure;
    s.otherFailure = true;
    // The client went away: nothing to answer, and no upstream to blame.
    if (ctx.cancelSignal.aborted) return 'stop';
    if (failure.kind === 'timeout' && !attempt.cut && method.timeoutMs !== undefined && method.onTimeout !== undefined) {
      // The method's own deadline ran out: the query is too heavy, another node would not do better.
      throw method.onTimeout();
    }
    // A timeout cut short by the call's deadline says nothing about the upstream.
    if (!(attempt.cut && failure.kind === 'timeout')) selector.onFailure?.(upstream, failure);
    logger.warn({ call: ctx.id, network: s.network.name, upstream: upstream.name, failure: failure.kind, reason: failure.message }, 'upstream attempt failed');
    if (failure.maybeReceived && !s.idempotent) {
      s.resendRefused = true;
      return 'stop';
    }
    return 'next';
  };

  return async (ctx, request) => {
    const s = begin(ctx, request);
    const { candidates, policy } = s;
    const signal = ctx.cancelSignal;
    for (let i = 0; i < candidates.length; i++) {
      const upstream = candidates[i]!;
      if (signal.aborted) break;
      if (upstream === s.hedgedTo) continue;
      const primary = upstream.settings.role === 'primary';
      if (primary && s.primaries >= policy.maxAttempts) continue;
      if (banned(s, upstream)) continue;
      const now = i === 0 ? s.startedAt : performance.now();
      const remaining = s.deadline - now;
      if (remaining <= 0) break;
      // 2. Admit before budget: an upstream the selector refuses now (a half-open partner whose trial
      // another call holds) is not sent the call, so its budget is not charged for it.
      if (selector.admit !== undefined && !selector.admit(upstream, ctx)) continue;
      const budget = upstream.settings.budget;
      if (budget !== undefined && !(await withinBudget(s, upstream, budget))) continue;
      const attempt = start(s, upstream, primary, now, remaining);
      let verdict: 'answer' | 'reask' | 'next' = 'next';
      try {
        const reply = await transmit(s, attempt, i);
        if (inspected(s, attempt, reply) === undefined) verdict = answerVerdict(s, attempt, i);
      } catch (error) {
        attempt.failure = asUpstreamFailure(error);
        attempt.ended?.(attempt.failure);
      }
      if (verdict === 'answer') return { reply: attempt.reply!, upstream: attempt.upstream };
      if (verdict === 'reask') i--;
      if (attempt.failure === undefined) continue;
      if (failed(s, attempt, attempt.failure) === 'stop') break;
    }
    s.aborted = signal.aborted;
    const ending = sendEnding(s, { network: s.network, method: s.method.name, selector });
    if (ending instanceof GatewayError) throw ending;
    return ending;
  };
}
