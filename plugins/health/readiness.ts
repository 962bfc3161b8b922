import { probeUpstream } from '../../core/upstream-api.js';
import { Tokens, type Network } from '../../core/plugin-api.js';
import { type GatewayRuntime } from '../../core/transport-api.js';
import { workerMembership } from '../workers/index.js';

/** What `/readyz` found: ready when the store answers, every network has a node that answers, and the worker group (if any) is not draining. */
export interface Readiness {
  /** Whether the gateway can serve: the store and every network are `ok`. */
  readonly ready: boolean;
  /** `ok`, or why the store cannot be used. */
  readonly store: string;
  /** Each network's state: `ok`, or why none of its nodes can serve. */
  readonly networks: Readonly<Record<string, string>>;
  /** In a worker group (`--workers n`): `<serving>/<n> workers serving`, or `draining` once it stops (then not ready). */
  readonly group?: string;
}

/** Rejects after `ms` with `what timed out`, unless `work` settles first. */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether one of the network's nodes answers now: each upstream is probed at once, as the failover
 * selector probes it (`probeUpstream`: the family's health call, `eth_blockNumber`, `getHealth`...; for a
 * network without one, the file-storage API, any answer), and one good answer is enough. Readiness asks
 * every node whatever its breaker says, and its probes do not move breakers: a load balancer's polling
 * must not steer traffic. A network the selector refuses calls for now (every breaker open) is not ready
 * either, whatever its nodes answer: a ready process must serve.
 */
async function networkState(gateway: GatewayRuntime, network: Network, timeoutMs: number): Promise<string> {
  if (network.upstreams.length === 0) return 'no node answers (no upstream)';
  // A node that answers is not enough: the gateway must also send calls to one.
  const refused = gateway.container.resolve(Tokens.UpstreamSelector).refusal?.(network);
  if (refused !== undefined) return `calls are refused (${refused})`;
  // The timeout bounds the connect phase too, which the request's own timeout does not; once one node
  // answered, the others' probes are dropped.
  const done = new AbortController();
  const signal = AbortSignal.any([done.signal, AbortSignal.timeout(timeoutMs)]);
  const answered = network.upstreams.map(async (upstream) => {
    const outcome = await probeUpstream(network, upstream, { timeoutMs, signal });
    if (!outcome.ok) throw new Error(outcome.problem);
  });
  try {
    await Promise.any(answered);
    return 'ok';
  } catch (error) {
    return `no node answers (${((error as AggregateError).errors[0] as Error).message})`;
  } finally {
    done.abort();
  }
}

/** Whether the store answers: a balance read, which needs it (a SQLite file, or Redis). */
async function storeState(gateway: GatewayRuntime, timeoutMs: number): Promise<string> {
  try {
    const ledger = gateway.container.resolve(Tokens.CreditLedger);
    await within(Promise.resolve(ledger.balance('tollgate-readiness-probe', 1, new Date(gateway.clock.now()))), timeoutMs, 'the store');
    return 'ok';
  } catch (error) {
    return `unreachable (${(error as Error).message})`;
  }
}

/** Checks the store and every network, all at once, each within `timeoutMs`. */
export async function checkReadiness(gateway: GatewayRuntime, timeoutMs: number): Promise<Readiness> {
  const networks = [...gateway.networks.all];
  const [store, ...states] = await Promise.all([storeState(gateway, timeoutMs), ...networks.map((network) => networkState(gateway, network, timeoutMs))]);
  const byName = Object.fromEntries(networks.map((network, i) => [network.name, states[i]!]));
  const ready = store === 'ok' && states.every((state) => state === 'ok');
  // The workers share the store and the nodes: what this worker found holds for the group, which can
  // serve unless the primary is draining it (a load balancer should stop sending calls then).
  const group = workerMembership()?.group();
  if (group === undefined) return { ready, store: store!, networks: byName };
  return { ready: ready && !group.draining, store: store!, networks: byName, group: group.draining ? 'draining' : `${group.serving}/${group.workers} workers serving` };
}
