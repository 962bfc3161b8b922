/**
 * The file-storage API: a kubo-compatible IPFS HTTP RPC (`POST {network base}/api/v0/<command>`,
 * commands `add`, `cat`, `get`, `object/get`, `block/get|put|stat`, `dag/get|put|resolve|import` and
 * `version`) behind the gateway, for networks of the `ipfs`
 * family. Clients authenticate with HTTP basic auth (API key and its secret); plans decide access and
 * per-key read and write request rates; answers stream end to end. The same networks serve the IPFS
 * Pinning Service API at `{network base}/pins`, with the key and secret as bearer token.
 *
 * @packageDocumentation
 */
import { Tokens, type GatewayConfig, type TollgatePlugin } from '../../core/plugin-api.js';
import { IPFS_FAMILY, createIpfsFamily } from './family.js';
import { IpfsTransport } from './ipfs-transport.js';
import { IPFS_PLUGIN, readIpfsSettings, resolveIpfsSettings, type IpfsSettings } from './settings.js';
import { credentialsStage } from './stages/credentials.js';
import { unknownKeyStage } from './stages/unknown-key.js';
import { SecretGuard } from './secret-guard.js';
import { planAccessStage } from './stages/plan-access.js';
import { requestRateStage } from './stages/request-rate.js';
import { objectGetStages } from './stages/object-get.js';
import { pinsStage } from './stages/pins.js';
import { addPinsStages } from './stages/add-pins.js';
import { pinningServiceStage } from './pinning-service/stage.js';
import { PinningServiceTransport } from './pinning-service/transport.js';
import { PlanStorageBytesToken, type PlanStorageBytes } from './storage-allowance.js';

export { IPFS_PLUGIN, type IpfsSettings, type PinningServiceSettings, type IpfsPlanLimits, type ResolvedIpfsPlanLimits, type ResolvedIpfsSettings } from './settings.js';
export { IPFS_FAMILY, IPFS_TRANSPORT } from './family.js';
export { KuboErrorCode, kuboErrorBody } from './kubo-errors.js';
export { IpfsTransport } from './ipfs-transport.js';
export { PinningServiceTransport } from './pinning-service/transport.js';
export { PSA_TRANSPORT } from './pinning-service/methods.js';
export { STREAM_ERROR_TRAILER } from './relay.js';
export { parseContentPath, type ContentPath } from './content-path.js';
export { SecretGuard } from './secret-guard.js';
export { SecretCheckBudget, type SecretCheckRates } from './secret-budget.js';
export { ScryptWorker } from './scrypt-worker.js';
export { decodeDagPb, objectJson, NOT_PROTOBUF, DAG_PB_CODE, type ObjectDataEncoding } from './dag-pb-object.js';
export { IPFS_REQUEST, type IpfsRequest } from './context-keys.js';
export { ERROR_NAME_HEADER } from './storage-limit.js';
export type { PlanStorageBytes } from './storage-allowance.js';

/**
 * Each plan's `storageBytes` as a gateway with this config (and `ipfs(options)`) applies it: for tools
 * that show a key's stored bytes beside its allowance without running the file API, such as the bundled
 * CLI's `usage` command.
 */
export function planStorageBytes(config: GatewayConfig, options: IpfsSettings = {}): PlanStorageBytes {
  const settings = resolveIpfsSettings([readIpfsSettings('ipfs()', options), readIpfsSettings(`plugins.${IPFS_PLUGIN}`, config.plugins[IPFS_PLUGIN])]);
  return (plan) => settings.plans.get(plan)?.storageBytes;
}

/**
 * The file-storage API as a plugin: registers the `ipfs` family, its transport and its stages (secret
 * check, plan access, request-rate limits, the `object/get` fallback). `options` are defaults; the
 * config's `plugins.ipfs` section overrides them.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({
 *   config: {
 *     keys: [{ key: 'my-api-key-123', secret: 'my-secret-456', plan: 'growth' }],
 *     networks: [{ name: 'ipfs', families: ['ipfs'], upstreams: [{ url: 'http://127.0.0.1:5001' }] }],
 *   },
 *   plugins: [ipfs()],
 * });
 * // curl -u my-api-key-123:my-secret-456 -X POST "http://127.0.0.1:8545/ipfs/api/v0/cat?arg=<cid>"
 * ```
 */
export function ipfs(options: IpfsSettings = {}): TollgatePlugin {
  const code = readIpfsSettings('ipfs()', options);
  let guard: SecretGuard | undefined;
  return {
    name: IPFS_PLUGIN,
    register(container, config) {
      const settings = resolveIpfsSettings([code, readIpfsSettings(`plugins.${IPFS_PLUGIN}`, config.plugins[IPFS_PLUGIN])]);
      guard = new SecretGuard(settings);
      container.register(Tokens.Family, { useValue: createIpfsFamily(settings) });
      container.register(Tokens.Transport, { useValue: new IpfsTransport(settings) });
      const storageBytes: PlanStorageBytes = (plan) => settings.plans.get(plan)?.storageBytes;
      container.register(PlanStorageBytesToken, { useValue: storageBytes });
      const pinningService = pinningServiceStage(settings);
      container.register(Tokens.Transport, { useValue: new PinningServiceTransport(settings, async () => pinningService.jobs()?.idle(), () => pinningService.jobs()?.stop()) });
      // Every stage of this plugin concerns file-storage calls only: the other networks' calls skip them.
      for (const stage of [unknownKeyStage(guard), credentialsStage(settings, guard), planAccessStage(settings), requestRateStage(settings), ...objectGetStages(), pinsStage(settings), ...addPinsStages(settings), pinningService]) {
        container.register(Tokens.Stage, { useValue: { ...stage, families: [IPFS_FAMILY] } });
      }
    },
    async stop() {
      await guard?.close();
    },
  };
}
