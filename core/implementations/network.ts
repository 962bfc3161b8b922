import type { MethodDefinition, Network, NetworkFamily, NetworkMethod } from '../model/context.js';
import type { NetworkConfig } from '../leaves/config/types.js';
import type { Upstream } from '../model/context.js';
import { compileParams } from './compile-params.js';
import { encodeRequest } from '../leaves/jsonrpc/encode.js';
import { callErrorTestOf, createJsonRpcProtocol } from './json-rpc-protocol.js';
import type { CallProtocol } from '../model/context.js';

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
    this.protocol = families.find((f) => f.protocol !== undefined)?.protocol ?? createJsonRpcProtocol(callErrorTestOf(families));
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
