import type { RequestContext } from '../contracts/request-context.js';
import { Errors } from '../errors/catalog.js';
import { GatewayError } from '../errors/gateway-error.js';

/** The stage-contract violation of a pipeline (or of `stage`, when one is named). */
export function contractError(what: string, stage?: string): GatewayError {
  return new GatewayError(Errors.STAGE_CONTRACT_VIOLATED, { message: `${stage === undefined ? 'the pipeline' : `pipeline stage "${stage}"`} ${what}` });
}

/**
 * The contract of what a stage (or a chain of stages) emits for one call: the context it received, once.
 * Given the `emitted`-th emission `out`, the violation it is, or undefined when it keeps the contract.
 * The one check the engine's run, the checked operator of each stage and `settleCall` all apply.
 */
export function emissionViolation(ctx: RequestContext, out: RequestContext, emitted: number, stage?: string): GatewayError | undefined {
  if (out !== ctx) return contractError('emitted another object than the context it received', stage);
  if (emitted > 1) return contractError('emitted more than one context', stage);
  return undefined;
}

/** The violation of a stage (or chain) that completed after `emitted` emissions, or undefined when it emitted. */
export function completionViolation(emitted: number, stage?: string): GatewayError | undefined {
  return emitted === 0 ? contractError('completed without emitting its context', stage) : undefined;
}
