import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay on a loopback port in front of a node, that can hold the node's answers back: while
 * gated, what the node sends is kept, so calls stay in flight in the gateway for as long as a test
 * needs; `open()` sends what was kept on and stops holding.
 */
export interface GatedRelay {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Holds the node's answers from now on. */
  gate(): void;
  /** Sends the held answers on and stops holding. */
  open(): void;
  /** Connections whose answer bytes are held now. */
  holding(): number;
  close(): Promise<void>;
}

/** Starts a {@link GatedRelay} in front of `target` (`http://host:port`). */
export async function startGatedRelay(target: string): Promise<GatedRelay> {
  const { hostname, port } = new URL(target);
  let gated = false;
  const held = new Map<Socket, Buffer[]>();
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const node = connect(Number(port), hostname);
    sockets.add(client).add(node);
    client.on('data', (chunk: Buffer) => node.write(chunk));
    node.on('data', (chunk: Buffer) => {
      if (!gated) return void client.write(chunk);
      const kept = held.get(client) ?? [];
      kept.push(chunk);
      held.set(client, kept);
    });
    const end = (): void => {
      client.destroy();
      node.destroy();
      held.delete(client);
      sockets.delete(client);
      sockets.delete(node);
    };
    client.on('close', end).on('error', end);
    node.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    gate: () => void (gated = true),
    open() {
      gated = false;
      for (const [client, chunks] of held) for (const chunk of chunks) client.write(chunk);
      held.clear();
    },
    holding: () => held.size,
    close: () => new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    }),
  };
}
