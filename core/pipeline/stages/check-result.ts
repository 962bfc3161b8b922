import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { JsonRpcResponse } from '../../contracts/json-rpc.js';
import { step } from '../stage-runner.js';
import { type Stage } from '../../contracts/stage.js';
import { methodOf, replyOf } from '../../context/context-access.js';

/**
 * Runs the method's `checkResult` hook on the upstream's answer. Only methods with a hook pay for
 * parsing the answer; every other answer is forwarded as the bytes the node sent. An answer no upstream
 * served in this call (one an earlier stage supplied, such as a cached answer) was checked when it was
 * first served and is not checked again.
 */
export function checkResult(): Stage {
  return step((ctx) => {
    const check = methodOf(ctx).checkResult;
    if (check === undefined || ctx.servedBy === undefined) return;
    let response: JsonRpcResponse;
    try {
      response = JSON.parse(Buffer.from(replyOf(ctx).body as Uint8Array).toString('utf8')) as JsonRpcResponse;
    } catch (error) {
      throw new GatewayError(Errors.UPSTREAM_BAD_RESPONSE, { cause: error });
    }
    check(response, ctx);
  });
}
