/**
 * A gateway serving the file-storage API in a process of its own, so a test can measure its memory:
 * `node --import tsx test/helpers/ipfs-gateway-child.ts <upstream url>`, or `... embedded <data dir>` for
 * the default gateway's embedded IPFS node (in this process). Prints `READY <port>` once it listens;
 * exits when its stdin closes (the test went away) or on SIGTERM.
 */
import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import { createGateway } from '../../core/index.js';
import { ipfs } from '../../plugins/ipfs/index.js';
import { devnet } from '@tollgate/devnet';

const upstream = process.argv[2];
if (upstream === undefined) {
  process.stderr.write('usage: ipfs-gateway-child.ts <upstream url>\n');
  process.exit(2);
}
const embedded = upstream === 'embedded';
const gateway = await createGateway({
  config: {
    log: { level: 'silent' },
    keys: [{ key: 'ipfs-child-key-0001', secret: 'ipfs-child-secret', plan: 'growth' }],
    networks: [{ name: 'ipfs', families: ['ipfs'], upstreams: [embedded ? { name: 'helia', embedded: 'helia' } : { url: upstream }] }],
  },
  plugins: embedded ? [ipfs(), devnet({ helia: { dataDir: process.argv[3]! } })] : [ipfs()],
});
const server = await gateway.listen(0, '127.0.0.1');
const stop = (): void => void gateway.close().finally(() => process.exit(0));
process.on('SIGTERM', stop);
process.stdin.on('end', stop);
process.stdin.on('error', stop);
process.stdin.resume();
process.stdout.write(`READY ${(server.address() as AddressInfo).port}\n`);
