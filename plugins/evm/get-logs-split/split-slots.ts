/**
 * The bound on one key's split `eth_getLogs` calls in flight on a network: each such call runs up to
 * `concurrency` node queries at once for up to the time limit, so a key running many of them at once
 * would hold the nodes for everyone.
 *
 * @module
 */
import { Errors, GatewayError } from '../../../core/plugin-api.js';
import type { NetworkRuntime } from '../../../core/family-api.js';

/** Per-network state: split calls in flight, by key id. */
const IN_FLIGHT = 'evm.getLogs.splitsInFlight';

function inFlightOf(network: NetworkRuntime): Map<string, number> {
  let counts = network.state.get(IN_FLIGHT) as Map<string, number> | undefined;
  if (counts === undefined) network.state.set(IN_FLIGHT, (counts = new Map()));
  return counts;
}

/**
 * Takes one of `keyId`'s `callsPerKey` split-call slots on `network`, and returns its release (to call
 * once, when the call's last node query has ended).
 *
 * @throws GatewayError `CONCURRENCY_LIMITED` (with `Retry-After: 1`) when the key already runs `callsPerKey` split calls there.
 */
export function takeSplitSlot(network: NetworkRuntime, keyId: string, callsPerKey: number): () => void {
  const counts = inFlightOf(network);
  const held = counts.get(keyId) ?? 0;
  if (held >= callsPerKey) {
    throw new GatewayError(Errors.CONCURRENCY_LIMITED, {
      message: `too many split eth_getLogs calls in flight: this key runs at most ${callsPerKey} at once on ${network.name}; wait for one to end or narrow the range`,
      data: { callsPerKey, retryAfterSeconds: 1 },
      headers: { 'retry-after': '1' },
    });
  }
  counts.set(keyId, held + 1);
  let released = false;
  return () => {
    if (released) return;
    released = true;
    const left = (counts.get(keyId) ?? 1) - 1;
    if (left <= 0) counts.delete(keyId);
    else counts.set(keyId, left);
  };
}
