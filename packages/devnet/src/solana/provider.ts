/**
 * The `litesvm` embedded-upstream provider of the devnet plugin: starts one {@link LiteSvmInstance}
 * per `litesvm#instance` and keeps track of them.
 *
 * @module
 */
import type { EmbeddedUpstreamProvider } from 'tollgate/upstream';
import type { NetworkConfig } from 'tollgate';
import { InstanceTracker } from '../instance-tracker.js';
import { readLiteSvmSettings, startLiteSvmInstance, type LiteSvmInstance, type LiteSvmSettings } from './instance.js';

/** The `litesvm` provider, with the instances it started. */
export interface LiteSvmProvider extends EmbeddedUpstreamProvider {
  /** Always `litesvm`. */
  readonly kind: 'litesvm';
  /** Starts (and seeds) instance `instance` for `network`. */
  start(instance: string, network: NetworkConfig): Promise<LiteSvmInstance>;
  /** Sets the config's layer of settings (the `plugins.devnet` section). */
  configure(section: Readonly<Record<string, unknown>> | undefined): void;
  /** A started instance by `litesvm` or `litesvm#instance`. */
  instance(id?: string): LiteSvmInstance | undefined;
  /** Every started instance not yet stopped. */
  instances(): LiteSvmInstance[];
  /** Stops every instance it started. */
  stop(): Promise<void>;
}

/**
 * The provider. Settings come in layers, each overriding the one before: `codeSettings`
 * (`devnet({ litesvm })`), the config's `plugins.devnet`, then the network's `options`.
 */
export function liteSvmProvider(codeSettings: LiteSvmSettings = {}): LiteSvmProvider {
  const code = readLiteSvmSettings('devnet({ litesvm })', codeSettings as Record<string, unknown>);
  let fromConfig: LiteSvmSettings = {};
  const started = new InstanceTracker<LiteSvmInstance>();
  return {
    kind: 'litesvm',
    configure(section) {
      fromConfig = readLiteSvmSettings('plugins.devnet', section);
    },
    start(instance, network) {
      const id = `litesvm#${instance}`;
      let settings: LiteSvmSettings;
      try {
        settings = { ...code, ...fromConfig, ...readLiteSvmSettings(`networks["${network.name}"].options`, network.options) };
      } catch (error) {
        return Promise.reject(error as Error);
      }
      return started.track(id, startLiteSvmInstance(id, settings));
    },
    instance(id = 'litesvm') {
      return started.get(id.includes('#') ? id : `${id}#default`);
    },
    instances() {
      return started.all();
    },
    stop() {
      return started.stopAll();
    },
  };
}
