import type { DependencyContainer } from 'tsyringe';
import type { Logger } from 'pino';
import { Tokens } from '../contracts/plugin.js';
import type { Clock } from '../util/clock.js';
import type { GatewayRuntime } from '../contracts/runtime.js';
import type { UsageRecorder } from '../contracts/usage.js';
import { usageWriter } from '../usage/usage-writer.js';
import { streamedCallRecorder } from '../metering/call-accounting.js';
import { createEventMeter, createEventRefund } from '../metering/event-meter.js';

/** What a gateway's runtime offers to meter what is not a call: usage, events and streamed calls. */
export type EventMetering = Pick<GatewayRuntime, 'recordUsage' | 'meterEvent' | 'refundEvents' | 'recordStreamedCall'>;

/**
 * A gateway's metering of events and usage, for every generation alike. Store plugins open their ledger
 * and usage recorder in `start`: each is resolved on first use, not when the gateway is assembled.
 */
export function eventMetering(container: DependencyContainer, clock: Clock, logger: Logger): EventMetering {
  const recordUsage = usageWriter(() => container.resolve<UsageRecorder>(Tokens.UsageRecorder), logger);
  let eventMeter: ReturnType<typeof createEventMeter> | undefined;
  let eventRefund: ReturnType<typeof createEventRefund> | undefined;
  return {
    recordUsage,
    meterEvent: (event) => (eventMeter ??= createEventMeter(container.resolve(Tokens.CreditLedger), recordUsage, clock))(event),
    refundEvents: (charge, events) => (eventRefund ??= createEventRefund(container.resolve(Tokens.CreditLedger), recordUsage, logger))(charge, events),
    recordStreamedCall: streamedCallRecorder(recordUsage, clock),
  };
}
