import { WebSocket, type ClientOptions } from 'ws';

/** A raw ws client that collects every message and the close code. */
export interface RawWsClient {
  readonly socket: WebSocket;
  /** Messages received, parsed. */
  readonly messages: unknown[];
  /** Resolves with the close code. */
  readonly closed: Promise<number>;
  /** Sends a value as JSON (or a string as is). */
  send(value: unknown): void;
  /** Resolves once `count` messages have arrived in total. */
  waitFor(count: number, timeoutMs?: number): Promise<unknown[]>;
  close(): void;
}

/** Opens a connection and waits until it is open. */
export async function openWs(url: string, options: ClientOptions = {}): Promise<RawWsClient> {
  const socket = new WebSocket(url, options);
  const messages: unknown[] = [];
  const waiters: Array<() => void> = [];
  socket.on('message', (data) => {
    messages.push(JSON.parse(String(data)));
    for (const w of waiters.splice(0)) w();
  });
  const closed = new Promise<number>((resolve) => socket.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
    socket.once('unexpected-response', (_req, res) => reject(new Error(`HTTP ${res.statusCode}`)));
  });
  const waitFor = (count: number, timeoutMs = 20_000): Promise<unknown[]> =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`got ${messages.length} of ${count} messages`)), timeoutMs);
      const check = (): void => {
        if (messages.length >= count) {
          clearTimeout(timer);
          resolve(messages);
        } else waiters.push(check);
      };
      check();
    });
  return {
    socket,
    messages,
    closed,
    send: (value) => socket.send(typeof value === 'string' ? value : JSON.stringify(value)),
    waitFor,
    close: () => socket.close(),
  };
}

/** Tries to open a connection that must be refused; resolves with the HTTP status and body. */
export function refusedWs(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url);
    socket.once('open', () => { socket.close(); reject(new Error('the connection was accepted')); });
    socket.once('unexpected-response', (_req, res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    socket.once('error', () => {});
  });
}

/** A JSON-RPC answer read off a connection. */
export interface WsAnswer {
  readonly id: number;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

let nextCallId = 1_000_000;

/** Sends one call on `client` and resolves with its answer (found by id among everything received). */
export async function wsCall(client: RawWsClient, method: string, params: unknown[]): Promise<WsAnswer> {
  const id = nextCallId++;
  client.send({ jsonrpc: '2.0', id, method, params });
  for (;;) {
    const found = (client.messages as WsAnswer[]).find((m) => m.id === id);
    if (found !== undefined) return found;
    await client.waitFor(client.messages.length + 1);
  }
}

/** The `result`s of the notifications of subscription `id` received on `client`, in order. */
export function notificationsOf(client: RawWsClient, id: unknown): unknown[] {
  return (client.messages as Array<{ method?: string; params?: { subscription?: unknown; result?: unknown } }>)
    .filter((m) => m.method !== undefined && m.params?.subscription === id)
    .map((m) => m.params!.result);
}
