import type { Network, NetworkFamily } from '../../core/plugin-api.js';
import { commandMethod, IPFS_COMMANDS } from './commands.js';
import { kuboProtocol } from './kubo-protocol.js';
import { psaMethods } from './pinning-service/methods.js';

/** The family's name, as networks list it (`families: [ipfs]`). */
export const IPFS_FAMILY = 'ipfs';

/** The name of the file-storage API's transport, recorded on its calls. */
export const IPFS_TRANSPORT = 'ipfs';

/**
 * The `ipfs` network family: the file-storage API's commands (`cat`, `object/get`, `add`, `version`)
 * over kubo's HTTP RPC protocol. Its commands cost no credits; request-rate limits apply instead.
 */
export function createIpfsFamily(options: { addTimeoutMs: number }): NetworkFamily {
  return {
    name: IPFS_FAMILY,
    // The Pinning Service API's operations are methods too, offered on its own transport only.
    methods: [...IPFS_COMMANDS.map((command) => commandMethod(command, { addTimeoutMs: options.addTimeoutMs, transport: IPFS_TRANSPORT })), ...psaMethods()],
    protocol: kuboProtocol,
  };
}

/** Whether `network` serves the file-storage API (it has the `ipfs` family). */
export function isIpfsNetwork(network: Pick<Network, 'families'>): boolean {
  return network.families.some((f) => f.name === IPFS_FAMILY);
}
