import { Tokens, type GatewayRuntime, type Network } from '../../core/index.js';

/** What `/readyz` found: ready when the store answers and every network has a node that answers. */
export interface Readiness {
  /** Whether the gateway can serve: the store and every network are `ok`. */
  readonly ready: boolean;
  /** `ok`, or why the store cannot be used. */
  readonly store: string;
  /** Each network's state: `ok`, or why none of its nodes can serve. */
  readonly networks: Readonly<Record<string, string>>;
}

/** Rejects after `ms` with `what timed out`, unless `work` settles first. */
function within<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms)));
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

/**
 * Whether one of the network's nodes answers now: its family's health probe (`eth_blockNumber`,
 * `getHealth`...) through the network, which tries each upstream in turn; for a family without a probe
 * (the file-storage API), any HTTP answer from one of its nodes.
 */
async function networkState(network: Network, timeoutMs: number): Promise<string> {
  const probe = network.families.find((family) => family.probe !== undefined)?.probe;
  try {
    if (probe !== undefined) {
      await within(network.rpc(probe.method, probe.params), timeoutMs, probe.method);
      return 'ok';
    }
    await Promise.any(network.upstreams.map((upstream) => within(upstream.request({ body: '' }, timeoutMs), timeoutMs, 'a request')));
    return 'ok';
  } catch (error) {
    const reason = error instanceof AggregateError ? (error.errors[0] as Error | undefined)?.message : (error as Error).message;
    return `no node answers (${reason ?? 'no upstream'})`;
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
  const [store, ...states] = await Promise.all([storeState(gateway, timeoutMs), ...networks.map((network) => networkState(network, timeoutMs))]);
  const byName = Object.fromEntries(networks.map((network, i) => [network.name, states[i]!]));
  return { ready: store === 'ok' && states.every((state) => state === 'ok'), store: store!, networks: byName };
}
