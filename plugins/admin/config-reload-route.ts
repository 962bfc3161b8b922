import { ConfigError } from '../../core/plugin-api.js';
import { type GatewayRuntime } from '../../core/transport-api.js';

/**
 * `POST /admin/v1/config/reload`: re-reads the gateway's configuration file and swaps it in for new calls
 * (see `GatewayRuntime.reload`). Answers 200 `{ reloaded: true, networks }`, or 400
 * `{ error: { code: "invalid_config", message, problems } }` with the problems `tollgate config check`
 * prints, the running configuration unchanged.
 */
export async function reloadConfig(gateway: GatewayRuntime): Promise<{ status: number; body: unknown }> {
  try {
    const config = await gateway.reload();
    return { status: 200, body: { reloaded: true, networks: config.networks.map((n) => n.name) } };
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return { status: 400, body: { error: { code: 'invalid_config', message: error.message, problems: error.problems } } };
  }
}
