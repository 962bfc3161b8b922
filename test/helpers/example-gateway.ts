import type { DevnetPlugin } from '@tollgate/devnet';
import type { GatewayConfigInput, NetworkConfig } from '../../core/index.js';
import { bundledPlugins } from '../../examples/gateway/bundled-plugins.js';
import { defaultConfig, DEMO_API_KEY } from '../../examples/gateway/default-config.js';
import { startTestGateway, type TestGateway } from './gateway.js';

/** The bundled gateway with its default config (plus `extraNetworks`), on a free port. */
export async function startExampleGateway(extraNetworks: NetworkConfig[] = [], extra: Partial<GatewayConfigInput> = {}): Promise<TestGateway & { devnet: DevnetPlugin; key: string }> {
  const plugins = await bundledPlugins();
  const devnet = plugins.find((p) => p.name === 'devnet') as DevnetPlugin;
  const gw = await startTestGateway({ ...defaultConfig, ...extra, networks: [...defaultConfig.networks, ...extraNetworks] }, plugins);
  return { ...gw, devnet, key: DEMO_API_KEY };
}
