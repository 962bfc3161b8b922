import type { Logger } from 'pino';
import type { Clock } from '../util/clock.js';
import type { RequestContext } from '../types.js';
import { usageOf, type CallObserver, type UsageEvent } from '../usage/usage.js';

/**
 * What happens when a call leaves the pipeline: its usage is recorded and every observer sees it. A
 * failing observer is logged, never passed on to the call.
 */
export function callFinisher(recordUsage: (event: UsageEvent) => void, observers: readonly CallObserver[], clock: Clock, logger: Logger): (ctx: RequestContext) => void {
  return (ctx) => {
    const event = usageOf(ctx, clock.now());
    if (event !== undefined) recordUsage(event);
    for (const observer of observers) {
      try {
        observer.callFinished(ctx);
      } catch (error) {
        logger.error({ err: error }, 'call observer failed');
      }
    }
  };
}
