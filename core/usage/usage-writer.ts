import type { Logger } from 'pino';
import type { UsageEvent, UsageRecorder } from '../contracts/usage.js';
import { isPromise } from '../util/maybe-promise.js';

/**
 * The gateway's one way into its usage recorder: calls leaving the pipeline, metered events and bytes a
 * transport streamed after the call all go through it. The recorder is resolved on first use (store
 * plugins open theirs in `start`); a failing recorder is logged, never passed on to the caller.
 */
export function usageWriter(recorder: () => UsageRecorder, logger: Logger): (event: UsageEvent) => void {
  let usage: UsageRecorder | undefined;
  const failed = (error: unknown): void => logger.error({ err: error }, 'usage recording failed');
  return (event) => {
    try {
      const recorded = (usage ??= recorder()).record(event);
      if (isPromise(recorded)) recorded.catch(failed);
    } catch (error) {
      failed(error);
    }
  };
}
