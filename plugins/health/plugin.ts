import { Tokens, validateSettings, type TollgatePlugin } from '../../core/plugin-api.js';
import { HealthTransport, type HealthSettings } from './health-transport.js';

/** The health plugin's name, and the key of its settings under `plugins` in the config. */
export const HEALTH_PLUGIN = 'health';

/** The settings' schema: unknown or bad fields are refused by name, in the gateway's configuration format. */
const SETTINGS_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  properties: {
    livenessPath: { type: 'string', pattern: '^/', default: '/healthz' },
    readinessPath: { type: 'string', pattern: '^/', default: '/readyz' },
    timeoutMs: { type: 'integer', minimum: 1, default: 2000 },
  },
} as const;

/**
 * Liveness and readiness probes on the gateway's port, for load balancers and Kubernetes:
 * `GET /healthz` answers 200 while the process serves; `GET /readyz` answers 200 when the store answers
 * and every network has a node that answers its family's health probe, and 503 with what does not
 * otherwise (each check within `timeoutMs`).
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ config, plugins: [health(), httpTransport(), evmFamily()] });
 * // curl http://127.0.0.1:8545/readyz   ->  {"ready":true,"store":"ok","networks":{"eth":"ok"}}
 * ```
 */
export function health(options: Partial<HealthSettings> = {}): TollgatePlugin {
  return {
    name: HEALTH_PLUGIN,
    register(container, config) {
      const settings = validateSettings<HealthSettings>(SETTINGS_SCHEMA, [options, config.plugins[HEALTH_PLUGIN]], `plugins.${HEALTH_PLUGIN}`);
      container.register(Tokens.Transport, { useValue: new HealthTransport(settings) });
    },
  };
}
