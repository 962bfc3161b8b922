import { Pool } from 'undici';

/** A JSON-RPC error answered by a node, with its code and optional data. */
export class JsonRpcCallError extends Error {
  /** The JSON-RPC error code. */
  readonly code: number;
  /** The error's `data`, if any (a revert payload, for example). */
  readonly data: unknown;

  constructor(method: string, error: { code: number; message: string; data?: unknown }) {
    super(`${method}: ${error.message} (${error.code})`);
    this.name = 'JsonRpcCallError';
    this.code = error.code;
    this.data = error.data;
  }
}

interface RpcReply {
  result?: unknown;
  error?: { code: number; message: string; data?: unknown };
}

/**
 * A small JSON-RPC-over-HTTP client on a keep-alive undici pool: the devnet uses it to wait for Anvil
 * and to seed it, without a signing library (Anvil's dev accounts are unlocked).
 */
export class JsonRpcClient {
  readonly #pool: Pool;
  readonly #path: string;
  #id = 0;

  /** @param url the node's HTTP URL. */
  constructor(url: string) {
    const target = new URL(url);
    this.#pool = new Pool(target.origin, { connections: 4 });
    this.#path = `${target.pathname}${target.search}`;
  }

  /**
   * Calls `method` and returns its result.
   *
   * @throws JsonRpcCallError when the node answers an error; the transport's error when it cannot be reached.
   */
  async call<T = unknown>(method: string, params: readonly unknown[] = [], timeoutMs = 30_000): Promise<T> {
    const response = await this.#pool.request({
      method: 'POST',
      path: this.#path,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.#id, method, params }),
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    const text = await response.body.text();
    let reply: RpcReply;
    try {
      reply = JSON.parse(text) as RpcReply;
    } catch {
      throw new Error(`${method}: HTTP ${response.statusCode} with a body that is not JSON: ${text.slice(0, 200)}`);
    }
    if (reply.error !== undefined) throw new JsonRpcCallError(method, reply.error);
    return reply.result as T;
  }

  /** Closes the connection pool once in-flight calls finish. */
  close(): Promise<void> {
    return this.#pool.close();
  }

  /** Closes the connection pool now, failing in-flight calls. */
  destroy(): Promise<void> {
    return this.#pool.destroy();
  }
}
