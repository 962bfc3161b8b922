import type { MethodDefinition, Network, NetworkFamily, NetworkMethod } from '../contracts/request-context.js';
import type { NetworkConfig } from '../config/types.js';
import type { Upstream } from '../contracts/upstream.js';
import { compileParams } from './compile-params.js';
import { callErrorTestOf, createJsonRpcProtocol } from '../jsonrpc/json-rpc-protocol.js';
import type { CallProtocol } from '../contracts/request-context.js';

/**
 * How a network's own calls ({@link Network.rpc}) reach its upstreams: the gateway gives every network
 * one that sends through the same selector, breakers and failover as a client's call.
 */
export type NetworkRpc = (network: Network, method: string, params: readonly unknown[]) => Promise<unknown>;

/** A served network: its methods (from its families), its upstreams, and per-network state. */
export class ConfiguredNetwork implements Network {
  /** The network's name. */
  readonly name: string;
  /** The network's config. */
  readonly config: NetworkConfig;
  /** Methods by name. */
  readonly methods: ReadonlyMap<string, NetworkMethod>;
  /** The network's families. */
  readonly families: readonly NetworkFamily[];
  /** All upstreams, primaries first. */
  readonly upstreams: readonly Upstream[];
  /** Per-network state for families. */
  readonly state = new Map<string, unknown>();
  /** How calls travel to this network's upstreams. */
  readonly protocol: CallProtocol;
  readonly #rpc: NetworkRpc;

  constructor(config: NetworkConfig, families: readonly NetworkFamily[], upstreams: readonly Upstream[], rpc: NetworkRpc) {
    this.#rpc = rpc;
    this.name = config.name;
    this.config = config;
    this.families = families;
    this.upstreams = [...upstreams.filter((u) => u.role === 'primary'), ...upstreams.filter((u) => u.role === 'partner')];
    const methods = new Map<string, NetworkMethod>();
    for (const family of families) {
      for (const definition of family.methods) {
        methods.set(definition.name, { definition, validate: compileParams(definition) });
      }
    }
    this.methods = methods;
    this.protocol = families.find((f) => f.protocol !== undefined)?.protocol ?? createJsonRpcProtocol(callErrorTestOf(families));
  }

  /** The network's options from the config. */
  get options(): Readonly<Record<string, unknown>> {
    return this.config.options ?? {};
  }

  /**
   * Calls `method` on the network's upstreams, uncharged, through the gateway's upstream path (see
   * {@link NetworkRpc}); rejects when none answers or the node answers an error.
   */
  rpc(method: string, params: readonly unknown[]): Promise<unknown> {
    return this.#rpc(this, method, params);
  }
}
