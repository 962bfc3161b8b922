import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import { answerView } from '../../jsonrpc/answer-view.js';
import { step } from '../stage-runner.js';
import { type Stage } from '../../contracts/stage.js';
import { methodOf, replyOf } from '../../context/context-access.js';

/**
 * Runs the method's `checkResult` hook on the upstream's answer, a view that reads the node's bytes by
 * scanning: a hook parses the answer only when it asks for the whole of it, and every answer is
 * forwarded as the bytes the node sent. Bytes that are not JSON end the call with `UPSTREAM_BAD_RESPONSE`. An answer no upstream
 * served in this call (one an earlier stage supplied, such as a cached answer) was checked when it was
 * first served and is not checked again.
 */
export function checkResult(): Stage {
  return step((ctx) => {
    const check = methodOf(ctx).checkResult;
    if (check === undefined || ctx.servedBy === undefined) return;
    const answer = answerView(replyOf(ctx).body as Uint8Array);
    if (answer.kind === 'not-json') throw new GatewayError(Errors.UPSTREAM_BAD_RESPONSE);
    check(answer, ctx);
  });
}
