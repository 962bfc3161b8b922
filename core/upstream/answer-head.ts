import type { RequestContext } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply } from '../contracts/upstream.js';
import type { UpstreamSelector } from '../contracts/selector.js';
import { answerView } from '../jsonrpc/answer-view.js';

/** An answer that showed a head below the floor: the head it showed, and the floor. */
export interface BehindAnswer {
  /** The head the answer showed. */
  readonly head: number;
  /** The lowest head a client may be shown. */
  readonly floor: number;
}

/**
 * Reads the head an answer shows (the method's `answerHead`) and tells the selector; returns what was
 * found when the head is below the network's floor, so the answer must not reach the client. An answer
 * that is a node's error, that is not a JSON-RPC answer, or that shows no head, passes. The hook reads the
 * answer by scanning its bytes up to the head it reads (`upToMember`), so a block read for its number is
 * neither parsed nor crossed past its number.
 */
export function answerBehind(ctx: RequestContext, upstream: Upstream, reply: UpstreamReply, selector: UpstreamSelector): BehindAnswer | undefined {
  const read = ctx.method?.answerHead;
  if (read === undefined || !(reply.body instanceof Uint8Array)) return undefined;
  // The answer is forwarded as the node sent it whatever the read finds, so the read checks the bytes up
  // to the head it reads: a block's `number`, not its transaction hashes after it.
  const answer = answerView(reply.body, { upToMember: true });
  if (answer.kind !== 'result') return undefined;
  const shown = read(answer, ctx.params);
  if (shown === undefined || !Number.isSafeInteger(shown.head)) return undefined;
  const scope = shown.scope ?? '';
  const floor = selector.headFloor?.(ctx.network, scope);
  selector.observeHead?.(upstream, scope, shown.head);
  return floor !== undefined && shown.head < floor ? { head: shown.head, floor } : undefined;
}
