import type { NetworkConfig, UpstreamConfig } from '../config/types.js';
import type { EmbeddedUpstreamInstance, EmbeddedUpstreamProvider } from '../contracts/plugin.js';
import { PluginError } from '../plugin/plugin-error.js';

/**
 * The embedded upstreams of one gateway: started on first reference (`embedded: "kind#instance"`),
 * shared by every network naming the same instance, and stopped together.
 */
export class EmbeddedUpstreams {
  readonly #providers = new Map<string, EmbeddedUpstreamProvider>();
  readonly #started = new Map<string, Promise<EmbeddedUpstreamInstance>>();

  constructor(providers: readonly EmbeddedUpstreamProvider[]) {
    for (const provider of providers) this.#providers.set(provider.kind, provider);
  }

  /** The URLs of `upstream`: its own, or those of the embedded instance it names (started if need be). */
  endpoint(network: NetworkConfig, upstream: UpstreamConfig, at: string): Promise<{ url: string; wsUrl: string | undefined }> {
    if (upstream.url !== undefined) return Promise.resolve({ url: upstream.url, wsUrl: upstream.wsUrl });
    const [kind = '', instance = 'default'] = upstream.embedded!.split('#');
    const provider = this.#providers.get(kind);
    if (provider === undefined) return Promise.reject(new PluginError(`${at}.embedded: no plugin provides embedded upstream "${kind}"`));
    const id = `${kind}#${instance}`;
    let started = this.#started.get(id);
    if (started === undefined) {
      started = provider.start(instance, network);
      this.#started.set(id, started);
    }
    return started.then((s) => ({ url: s.url, wsUrl: upstream.wsUrl ?? s.wsUrl }));
  }

  /** Stops every instance that started (ones that failed to start are skipped). */
  async stop(): Promise<void> {
    const started = await Promise.allSettled(this.#started.values());
    await Promise.allSettled(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)));
  }
}
