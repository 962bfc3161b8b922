/**
 * The part of a `ws` WebSocket that a client connection uses, declared here so this plugin's public
 * declarations compile without `@types/ws`: a `WebSocket` from the `ws` package is one.
 */
export interface ClientSocket {
  /** The `readyState` of an open socket. */
  readonly OPEN: number;
  /** The `readyState` of a closed socket. */
  readonly CLOSED: number;
  /** The socket's state (`OPEN`, `CLOSED`, ...). */
  readonly readyState: number;
  /** Bytes queued by `send` and not yet handed to the kernel. */
  readonly bufferedAmount: number;
  /** Queues a frame; `callback` runs once it is written or failed. */
  send(data: string | Uint8Array, options: { readonly binary: boolean }, callback?: (error?: Error | null) => void): void;
  /** Sends a ping frame. */
  ping(): void;
  /** Stops reading from the socket. */
  pause(): void;
  /** Reads from the socket again. */
  resume(): void;
  /** Starts the closing handshake. */
  close(code?: number, reason?: string): void;
  /** Destroys the socket at once. */
  terminate(): void;
  /** A message arrived: a Buffer, or the fragments of one. */
  on(event: 'message', listener: (data: ClientMessage) => void): this;
  /** A pong (or any of the socket's other events: `close`, `error`). */
  on(event: 'pong' | 'close' | 'error', listener: () => void): this;
  /** Runs `listener` once, on the next such event. */
  once(event: 'close', listener: () => void): this;
}

/** A message as `ws` delivers it: a Buffer, its fragments, or an ArrayBuffer. */
export type ClientMessage = Buffer | ArrayBuffer | Buffer[];
