import { GatewayError } from '../../errors/gateway-error.js';
import { Errors } from '../../errors/catalog.js';
import type { JsonRpcResponse } from '../../jsonrpc/types.js';
import { step, type Stage } from '../stage.js';

/**
 * Runs the method's `checkResult` hook on the upstream's answer. Only methods with a hook pay for
 * parsing the answer; every other answer is forwarded as the bytes the node sent.
 */
export function checkResult(): Stage {
  return step((ctx) => {
    const check = ctx.method!.checkResult;
    if (check === undefined) return;
    let response: JsonRpcResponse;
    try {
      response = JSON.parse(Buffer.from(ctx.reply!.body as Uint8Array).toString('utf8')) as JsonRpcResponse;
    } catch (error) {
      throw new GatewayError(Errors.UPSTREAM_BAD_RESPONSE, { cause: error });
    }
    check(response, ctx);
  });
}
