import type { Clock } from '../util/clock.js';
import type { Logger } from 'pino';
import type { Charge, Metering } from '../contracts/metering.js';
import type { EventCharge, EventMeter, EventRefund, EventTaken, MeteredEvent } from '../contracts/metered-event.js';
import type { UsageEvent } from '../contracts/usage.js';
import { isPromise } from '../util/maybe-promise.js';

export type { MeteredEvent, EventMeter, EventCharge, EventTaken, EventRefund };

const FREE: EventCharge = Object.freeze({ ok: true });

function listOf(events: MeteredEvent | readonly MeteredEvent[]): readonly MeteredEvent[] {
  return Array.isArray(events) ? events : [events as MeteredEvent];
}

/** Usage of `events` at `at`, summed per method (a batch of one kind is one record). */
function usageOf(events: readonly MeteredEvent[], at: number, sign: 1 | -1): UsageEvent[] {
  const byMethod = new Map<string, { calls: number; credits: number; bytes: number }>();
  for (const event of events) {
    const total = byMethod.get(event.method);
    if (total === undefined) byMethod.set(event.method, { calls: 1, credits: event.credits, bytes: event.bytes ?? 0 });
    else {
      total.calls++;
      total.credits += event.credits;
      total.bytes += event.bytes ?? 0;
    }
  }
  const first = events[0]!;
  return [...byMethod].map(([method, total]) => ({
    keyId: first.key.id, network: first.network, method, at, calls: sign * total.calls, credits: sign * total.credits, bytes: sign * total.bytes, failed: false,
  }));
}

/** A charge of events as the event meter answers it; a throughput refusal cannot happen (no bucket is asked for). */
function eventChargeOf(charge: Charge): EventCharge {
  if (charge.ok) return charge;
  if (charge.code === 'CREDITS_EXHAUSTED') return { ok: false, remaining: charge.remaining, paidRemaining: charge.paidRemaining, resetsAt: charge.resetsAt };
  // A broken Metering, not a state of the key: no code of its own (the transport logs it).
  throw new Error('the gateway\'s Metering refused events for throughput, though they were charged without a bucket');
}

/**
 * Builds the gateway's {@link EventMeter} over its {@link Metering} (charged without a throughput
 * bucket) and the gateway's way into its usage recorder.
 */
export function createEventMeter(metering: Metering, recordUsage: (event: UsageEvent) => void, clock: Clock): EventMeter {
  const record = (events: readonly MeteredEvent[], at: number, result: EventCharge): EventCharge => {
    if (!result.ok) return result;
    for (const usage of usageOf(events, at, 1)) recordUsage(usage);
    return result;
  };
  return (input) => {
    const events = listOf(input);
    const at = clock.now();
    if (events.length === 0) return FREE;
    let credits = 0;
    for (const event of events) credits += event.credits;
    if (credits <= 0) return record(events, at, FREE);
    const first = events[0]!;
    const result = metering.charge(first.key.id, credits, { dailyCredits: first.plan.dailyCredits }, at);
    return isPromise(result) ? result.then((r) => record(events, at, eventChargeOf(r))) : record(events, at, eventChargeOf(result));
  };
}

/** Builds the gateway's {@link EventRefund}: the charge's own refund, then usage taken back on the debit's own day. */
export function createEventRefund(recordUsage: (event: UsageEvent) => void, logger: Logger): EventRefund {
  return (charge, input) => {
    const events = listOf(input);
    const receipt = charge.receipt;
    if (receipt === undefined || charge.refund === undefined || events.length === 0) return;
    const failed = (error: unknown): void => logger.error({ err: error }, 'refund of undelivered events failed');
    // On the debit's own UTC day, as the ledger gives it back.
    const refunded = (): void => { for (const usage of usageOf(events, Date.parse(`${receipt.day}T00:00:00.000Z`), -1)) recordUsage(usage); };
    try {
      const done = charge.refund();
      if (isPromise(done)) done.then(refunded, failed);
      else refunded();
    } catch (error) {
      failed(error);
    }
  };
}
