import type { Clock } from '../../leaves/clock.js';
import type { CreditLedger, DebitResult } from '../../model/credit-ledger.js';
import type { EventCharge, EventMeter, EventTaken, MeteredEvent } from '../../model/metered-event.js';
import type { UsageEvent } from '../../model/observe.js';
import { isPromise } from '../../model/stage.js';

export type { MeteredEvent, EventMeter, EventCharge, EventTaken };

const FREE: EventCharge = Object.freeze({ ok: true });

/** Builds the gateway's {@link EventMeter} over its ledger and the gateway's way into its usage recorder. */
export function createEventMeter(ledger: CreditLedger, recordUsage: (event: UsageEvent) => void, clock: Clock): EventMeter {
  const record = (event: MeteredEvent, at: number, result: DebitResult | EventCharge): EventCharge => {
    if (!result.ok) return result;
    recordUsage({ keyId: event.key.id, network: event.network, method: event.method, at, calls: 1, credits: event.credits, bytes: event.bytes ?? 0, failed: false });
    return FREE;
  };
  return (event) => {
    const at = clock.now();
    if (event.credits <= 0) return record(event, at, FREE);
    const result = ledger.debit(event.key.id, event.credits, event.plan.dailyCredits, new Date(at));
    return isPromise(result) ? result.then((r) => record(event, at, r)) : record(event, at, result);
  };
}
