import type { MethodDefinition, NetworkFamily } from './family.js';
import type { NetworkConfig } from './config/types.js';
import type { Upstream } from './upstream/upstream.js';
import { compileParams, type ParamsValidator } from './validation/compile-params.js';
import { encodeRequest } from './jsonrpc/encode.js';
import { jsonRpcProtocol } from './jsonrpc/protocol.js';
import type { CallProtocol } from './protocol.js';

/** A method of a network, with its compiled params validator. */
export interface NetworkMethod {
  /** The definition from its family. */
  readonly definition: MethodDefinition;
  /** Validates params; returns a message naming the bad parameter, or undefined. */
  readonly validate: ParamsValidator;
}

/** What a family's hooks may use of a network: its state and an uncharged way to ask its upstreams. */
export interface NetworkRuntime {
  /** The network's name. */
  readonly name: string;
  /** Per-network state for families (a cached head block, for example). */
  readonly state: Map<string, unknown>;
  /** The network's options from the config. */
  readonly options: Readonly<Record<string, unknown>>;
  /**
   * Calls a method on the network's upstreams outside any client's call (nothing is charged) and returns
   * its result; throws when no upstream answers or the answer is an error.
   */
  rpc(method: string, params: readonly unknown[]): Promise<unknown>;
}

/** A served network: its methods (from its families), its upstreams, and per-network state. */
export class Network implements NetworkRuntime {
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
  #rpcId = 0;
  #unhealthy: (() => ReadonlySet<string>) | undefined;

  constructor(config: NetworkConfig, families: readonly NetworkFamily[], upstreams: readonly Upstream[]) {
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
    this.protocol = families.find((f) => f.protocol !== undefined)?.protocol ?? jsonRpcProtocol;
  }

  /** The network's options from the config. */
  get options(): Readonly<Record<string, unknown>> {
    return this.config.options ?? {};
  }

  /**
   * Tells {@link Network.rpc} which upstreams are currently unhealthy (by name), so its lookups go to
   * healthy ones first; the gateway wires in its upstream selector's view.
   */
  useHealth(unhealthy: () => ReadonlySet<string>): void {
    this.#unhealthy = unhealthy;
  }

  /** Tries healthy primaries, then healthy partners, then the unhealthy ones (a last resort). */
  async rpc(method: string, params: readonly unknown[]): Promise<unknown> {
    const body = encodeRequest(++this.#rpcId, method, params);
    let lastError: unknown = new Error(`network ${this.name} has no upstream`);
    const unhealthy = this.#unhealthy?.();
    const order = unhealthy === undefined || unhealthy.size === 0
      ? this.upstreams
      : [...this.upstreams.filter((u) => !unhealthy.has(u.name)), ...this.upstreams.filter((u) => unhealthy.has(u.name))];
    for (const upstream of order) {
      try {
        const reply = await upstream.request({ body });
        const parsed = JSON.parse(Buffer.from(reply.body as Uint8Array).toString('utf8')) as { result?: unknown; error?: { message: string } };
        if (parsed.error !== undefined) throw new Error(`${method} failed on ${upstream.name}: ${parsed.error.message}`);
        return parsed.result;
      } catch (error) {
        lastError = error;
      }
    }
    throw lastError;
  }
}
