import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/** A connection through a {@link TcpRelay}, as the relay classified it from its first bytes. */
interface Relayed {
  readonly kind: 'http' | 'ws';
  readonly client: Socket;
  readonly node: Socket;
  /** Node bytes held back while the relay holds WebSocket answers. */
  readonly held: Buffer[];
}

/**
 * A TCP relay on a loopback port in front of a node's HTTP-and-WebSocket port, that tells a WebSocket
 * connection (an HTTP `GET` with `Upgrade: websocket`) from plain HTTP ones by their first bytes. It
 * keeps what was sent over HTTP as text (so a test can tell whether a call went that way: a client's
 * WebSocket frames are masked, HTTP bodies are not), counts WebSocket connections, can hold the node's
 * WebSocket answers back, cut every WebSocket, and refuse new ones.
 */
export interface TcpRelay {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** `ws://127.0.0.1:<port>` */
  readonly wsUrl: string;
  /** Everything clients sent over plain HTTP connections, as latin1 text. */
  readonly httpText: string;
  /** WebSocket connections opened through the relay so far. */
  readonly wsOpened: number;
  /** WebSocket connections open now. */
  readonly wsOpen: number;
  /** Bytes clients sent over WebSocket connections. */
  readonly wsBytesIn: number;
  /** Holds the node's bytes on WebSocket connections from now on, until {@link release}. */
  hold(): void;
  /** Sends the held bytes on and stops holding. */
  release(): void;
  /** Chunks held now. */
  readonly held: number;
  /** Cuts every WebSocket connection (both sides, without a closing handshake). */
  cutWebSockets(): void;
  /** While true, a new WebSocket connection is cut as soon as it is recognised. */
  refuseWebSockets: boolean;
  close(): Promise<void>;
}

const WS_UPGRADE = /^GET [^\r\n]*\r\n(?:[^\r\n]+\r\n)*?upgrade:\s*websocket/i;

/** Starts a {@link TcpRelay} to `target` (`http://host:port`). */
export async function startTcpRelay(target: string): Promise<TcpRelay> {
  const { hostname, port } = new URL(target);
  const open = new Set<Relayed>();
  let httpText = '';
  let wsOpened = 0;
  let wsBytesIn = 0;
  let holding = false;
  const relay = {} as { refuseWebSockets: boolean };
  relay.refuseWebSockets = false;
  const server: Server = createServer((client) => {
    client.once('data', (first: Buffer) => {
      const kind = WS_UPGRADE.test(first.toString('latin1')) ? 'ws' : 'http';
      if (kind === 'ws' && relay.refuseWebSockets) {
        client.destroy();
        return;
      }
      const node = connect(Number(port), hostname);
      const entry: Relayed = { kind, client, node, held: [] };
      open.add(entry);
      if (kind === 'ws') wsOpened++;
      const fromClient = (chunk: Buffer): void => {
        if (kind === 'http') httpText += chunk.toString('latin1');
        else wsBytesIn += chunk.length;
        node.write(chunk);
      };
      fromClient(first);
      client.on('data', fromClient);
      node.on('data', (chunk: Buffer) => {
        if (kind === 'ws' && holding) entry.held.push(chunk);
        else client.write(chunk);
      });
      const end = (): void => {
        open.delete(entry);
        client.destroy();
        node.destroy();
      };
      client.on('close', end);
      node.on('close', end);
      client.on('error', end);
      node.on('error', end);
    });
    client.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ws = (): Relayed[] => [...open].filter((c) => c.kind === 'ws');
  return Object.defineProperties(relay, {
    url: { value: `http://${address}` },
    wsUrl: { value: `ws://${address}` },
    httpText: { get: () => httpText },
    wsOpened: { get: () => wsOpened },
    wsOpen: { get: () => ws().length },
    wsBytesIn: { get: () => wsBytesIn },
    held: { get: () => ws().reduce((n, c) => n + c.held.length, 0) },
    hold: { value: () => { holding = true; } },
    release: {
      value: () => {
        holding = false;
        for (const c of ws()) for (const chunk of c.held.splice(0)) c.client.write(chunk);
      },
    },
    cutWebSockets: { value: () => { for (const c of ws()) { c.client.destroy(); c.node.destroy(); } } },
    close: {
      value: () => new Promise<void>((resolve) => {
        for (const c of open) { c.client.destroy(); c.node.destroy(); }
        server.close(() => resolve());
      }),
    },
  }) as TcpRelay;
}
