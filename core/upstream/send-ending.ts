import { GatewayError } from '../errors/gateway-error.js';
import { Errors } from '../errors/catalog.js';
import type { Network } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply } from '../contracts/upstream.js';
import type { BehindAnswer } from './answer-head.js';
import type { UpstreamSelector } from '../contracts/selector.js';
import { networkUnavailable } from './unavailable.js';
import type { UpstreamFailure } from '../contracts/upstream-failure.js';

/**
 * What one call's attempts met when none gave the client an answer: the sender records it attempt by
 * attempt, and {@link sendEnding} picks the call's ending from it.
 */
export interface SendRecord {
  /** The call was cancelled (the client went away). */
  aborted: boolean;
  /** The last failure to answer (connect error, timeout, HTTP 5xx...). */
  last: UpstreamFailure | undefined;
  /** Some upstream failed to answer (anything but "method not found"). */
  otherFailure: boolean;
  /** An answer showed a head below the floor: the latest such. */
  behind: BehindAnswer | undefined;
  /** "Method not found" from an upstream asked or skipped for its ban: the node's words. */
  notServed: string | undefined;
  /** A forwarded call's "method not found" answer, kept to pass on when no other node serves the method. */
  notServedAnswer: { readonly reply: UpstreamReply; readonly upstream: Upstream } | undefined;
  /** An upstream was skipped for its own budget. */
  overBudget: boolean;
  /** A call that is not idempotent failed after its node may have received it: it is not sent again. */
  resendRefused: boolean;
}

/** What the ending of a call nobody answered needs besides its record. */
interface EndingContext {
  readonly network: Network;
  readonly method: string;
  readonly selector: UpstreamSelector;
}

/** One row of {@link ENDINGS}: when it applies, and the call's ending then. */
interface Ending {
  readonly when: (r: SendRecord) => boolean;
  readonly end: (r: SendRecord, c: EndingContext) => GatewayError | { readonly reply: UpstreamReply; readonly upstream: Upstream };
}

/**
 * Which failure wins when no upstream answered, first row first: a client that went away; no node that
 * could be asked serves the method (and nothing else went wrong); an answer behind the head floor; a
 * timeout; every upstream that could serve over its own budget; a send that is not repeated; else the
 * network is unavailable.
 */
const ENDINGS: readonly Ending[] = [
  {
    when: (r) => r.aborted,
    end: (r) => new GatewayError(Errors.UPSTREAM_UNAVAILABLE, { message: 'the client went away', cause: r.last }),
  },
  {
    when: (r) => r.notServed !== undefined && !r.otherFailure && r.behind === undefined,
    end: (r) => r.notServedAnswer ?? new GatewayError(Errors.METHOD_NOT_FOUND, { message: r.notServed! }),
  },
  {
    when: (r) => r.behind !== undefined,
    end: (r, c) =>
      new GatewayError(Errors.UPSTREAM_BEHIND, {
        message: `no node of ${c.network.name} that could answer has reached head ${r.behind!.floor} yet (the closest is at ${r.behind!.head})`,
        headers: { 'retry-after': '1' },
      }),
  },
  {
    when: (r) => r.last?.kind === 'timeout',
    end: (r, c) => new GatewayError(Errors.UPSTREAM_TIMEOUT, { message: `no upstream of ${c.network.name} answered in time`, cause: r.last }),
  },
  {
    when: (r) => r.overBudget && r.last === undefined,
    end: (_, c) => networkUnavailable(c.network, c.selector, `every upstream of ${c.network.name} that could serve the call is over its own budget`),
  },
  {
    when: (r) => r.resendRefused,
    end: (r, c) =>
      networkUnavailable(
        c.network,
        c.selector,
        `the node failed after it may have received the call; ${c.method} is not sent twice: check its effect before sending it again`,
        r.last,
      ),
  },
  { when: () => true, end: (r, c) => networkUnavailable(c.network, c.selector, undefined, r.last) },
];

/**
 * The ending of a call no upstream answered: the error of the first row of the precedence table that
 * applies, or a forwarded call's "method not found" answer.
 */
export function sendEnding(record: SendRecord, context: EndingContext): GatewayError | { readonly reply: UpstreamReply; readonly upstream: Upstream } {
  for (const ending of ENDINGS) if (ending.when(record)) return ending.end(record, context);
  throw new Error('unreachable: the last ending always applies');
}
