import { promClient } from './peers.js';
import type { RedisConnection } from './connection.js';

const UP = 'tollgate_store_up';
const TRANSITIONS = 'tollgate_store_transitions_total';
const DOWN_SECONDS = 'tollgate_store_down_seconds_total';
const LABELS = ['store', 'address'] as const;

/** The metric named `name` in prom-client's shared registry, created by `create` the first time. */
function shared<T>(name: string, create: () => T): T {
  return (promClient.register.getSingleMetric(name) as T | undefined) ?? create();
}

/**
 * Exports a connection's state in prom-client's shared registry (which the metrics plugin serves next
 * to its own): `tollgate_store_up` (1 or 0), `tollgate_store_transitions_total{state}` and
 * `tollgate_store_down_seconds_total` (length of the outages that ended). The registry is the shared one
 * because the store and the metrics plugin know nothing of each other.
 */
export function exportConnectionMetrics(connection: RedisConnection): void {
  const labels = { store: 'redis', address: connection.address };
  const up = shared(UP, () => new promClient.Gauge({ name: UP, help: 'Whether the store answers (1) or not (0).', labelNames: LABELS }));
  const transitions = shared(TRANSITIONS, () => new promClient.Counter({ name: TRANSITIONS, help: 'Store connection transitions, by new state (down, up).', labelNames: [...LABELS, 'state'] }));
  const downSeconds = shared(DOWN_SECONDS, () => new promClient.Counter({ name: DOWN_SECONDS, help: 'Seconds the store was unreachable, counted when each outage ends.', labelNames: LABELS }));
  up.set(labels, 1);
  transitions.inc({ ...labels, state: 'down' }, 0);
  transitions.inc({ ...labels, state: 'up' }, 0);
  downSeconds.inc(labels, 0);
  connection.onTransition(({ state, afterMs }) => {
    up.set(labels, state === 'up' ? 1 : 0);
    transitions.inc({ ...labels, state });
    if (state === 'up') downSeconds.inc(labels, afterMs / 1000);
  });
}
