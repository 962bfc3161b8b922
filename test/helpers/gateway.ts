import 'reflect-metadata';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createGateway, type Gateway, type GatewayConfigInput, type TollgatePlugin } from '../../core/index.js';
import { type Clock } from '../../core/plugin-api.js';

/** A gateway listening on a free loopback port, for tests. */
export interface TestGateway {
  readonly gateway: Gateway;
  readonly server: Server;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The JSON-RPC URL of `network` for `key`. */
  url(network: string, key: string): string;
  close(): Promise<void>;
}

/** Starts a gateway on port 0 with silent logs. */
export async function startTestGateway(config: GatewayConfigInput, plugins: TollgatePlugin[], options: { clock?: Clock } = {}): Promise<TestGateway> {
  const gateway = await createGateway({
    config: { ...config, log: { level: 'silent', ...config.log }, server: { ...config.server, host: '127.0.0.1', port: 0 } },
    plugins,
    clock: options.clock,
  });
  const server = await gateway.listen();
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    gateway,
    server,
    origin,
    url: (network, key) => `${origin}/${network}/v3/${key}`,
    close: () => gateway.close(),
  };
}

/** A clock tests can set and move. */
export class ManualClock implements Clock {
  constructor(public ms: number) {}
  now(): number {
    return this.ms;
  }
  /** Moves the clock forward by `ms`. */
  advance(ms: number): void {
    this.ms += ms;
  }
}
