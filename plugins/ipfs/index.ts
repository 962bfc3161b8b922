/**
 * The file-storage API: a kubo-compatible IPFS HTTP RPC (`POST {network base}/api/v0/<command>`,
 * commands `cat`, `object/get`, `add` and `version`) behind the gateway, for networks of the `ipfs`
 * family. Clients authenticate with HTTP basic auth (API key and its secret); plans decide access and
 * per-key read and write request rates; answers stream end to end.
 *
 * @packageDocumentation
 */
import { Tokens, type TollgatePlugin } from '../../core/index.js';
import { IPFS_FAMILY, createIpfsFamily } from './family.js';
import { IpfsTransport } from './ipfs-transport.js';
import { IPFS_PLUGIN, readIpfsSettings, resolveIpfsSettings, type IpfsSettings } from './settings.js';
import { credentialsStage } from './stages/credentials.js';
import { unknownKeyStage } from './stages/unknown-key.js';
import { SecretGuard } from './secret-guard.js';
import { planAccessStage } from './stages/plan-access.js';
import { requestRateStage } from './stages/request-rate.js';
import { objectGetStages } from './stages/object-get.js';

export { IPFS_PLUGIN, DEFAULT_IPFS_PLANS, readIpfsSettings, resolveIpfsSettings, type IpfsSettings, type IpfsPlanLimits, type ResolvedIpfsSettings } from './settings.js';
export { IPFS_FAMILY, IPFS_TRANSPORT, createIpfsFamily, isIpfsNetwork } from './family.js';
export { IPFS_COMMANDS, ipfsCommand, commandMethod, type IpfsCommand, type CommandKind } from './commands.js';
export { kuboProtocol, isKuboError } from './kubo-protocol.js';
export { KuboErrorCode, kuboErrorBody, kuboErrorReply, kuboErrorMessage } from './kubo-errors.js';
export { IpfsTransport } from './ipfs-transport.js';
export { relay, RELAY_WINDOW, STREAM_ERROR_TRAILER, type RelayOutcome } from './relay.js';
export { parseBasicAuth, type BasicCredentials } from './basic-auth.js';
export { parseContentPath, type ContentPath } from './content-path.js';
export { IPFS_SECRET_CHECK } from './secret-check.js';
export { SecretGuard } from './secret-guard.js';
export { SecretCheckBudget, type SecretCheckRates } from './secret-budget.js';
export { ScryptWorker } from './scrypt-worker.js';
export { decodeDagPb, objectJson, NOT_PROTOBUF, DAG_PB_CODE, type ObjectDataEncoding } from './dag-pb-object.js';
export { goJsonString } from './go-json.js';
export { IPFS_REQUEST, OBJECT_FROM_BLOCK, type IpfsRequest } from './context-keys.js';
export { credentialsStage, refuseCredentials, CREDENTIALS_STAGE } from './stages/credentials.js';
export { unknownKeyStage, UNKNOWN_KEY_STAGE } from './stages/unknown-key.js';
export { planAccessStage, PLAN_ACCESS_STAGE } from './stages/plan-access.js';
export { requestRateStage, REQUEST_RATE_STAGE } from './stages/request-rate.js';
export { objectGetStages, lacksObjectGet, OBJECT_GET_ROUTE_STAGE, OBJECT_GET_FALLBACK_STAGE } from './stages/object-get.js';

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
      // Every stage of this plugin concerns file-storage calls only: the other networks' calls skip them.
      for (const stage of [unknownKeyStage(guard), credentialsStage(settings, guard), planAccessStage(settings), requestRateStage(settings), ...objectGetStages()]) {
        container.register(Tokens.Stage, { useValue: { ...stage, families: [IPFS_FAMILY] } });
      }
    },
    async stop() {
      await guard?.close();
    },
  };
}
