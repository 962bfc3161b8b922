import type { Network } from '../../core/plugin-api.js';
import type { NetworkFamily } from '../../core/family-api.js';
import { commandMethod, IPFS_COMMANDS } from './commands.js';
import { kuboProtocol } from './kubo-protocol.js';
import { psaMethods } from './pinning-service/methods.js';

/** The family's name, as networks list it (`families: [ipfs]`). */
export const IPFS_FAMILY = 'ipfs';

/** The name of the file-storage API's transport, recorded on its calls. */
export const IPFS_TRANSPORT = 'ipfs';

/**
 * The `ipfs` network family: the file-storage API's commands (`IPFS_COMMANDS`) over kubo's HTTP RPC
 * protocol, each at its credits (`credits` overrides them by name), with request-rate limits besides.
 */
export function createIpfsFamily(options: { addTimeoutMs: number; credits?: Readonly<Record<string, number>> }): NetworkFamily {
  return {
    name: IPFS_FAMILY,
    // The Pinning Service API's operations are methods too, offered on its own transport only.
    methods: [
      ...IPFS_COMMANDS.map((command) => commandMethod(command, { addTimeoutMs: options.addTimeoutMs, transport: IPFS_TRANSPORT, ...(options.credits === undefined ? {} : { credits: options.credits }) })),
      ...psaMethods(options.credits),
    ],
    protocol: kuboProtocol,
  };
}

/** Whether `network` serves the file-storage API (it has the `ipfs` family). */
export function isIpfsNetwork(network: Pick<Network, 'families'>): boolean {
  return network.families.some((f) => f.name === IPFS_FAMILY);
}
