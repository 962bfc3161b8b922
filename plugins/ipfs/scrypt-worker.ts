import { timingSafeEqual } from 'node:crypto';
import { Worker } from 'node:worker_threads';
import { decodeSecretHash, SECRET_SCRYPT_PARAMS } from '../../core/transport-api.js';

/** The worker's code: scrypt, synchronously, on the worker's own thread (never on libuv's pool). */
const SOURCE = `
const { parentPort } = require('node:worker_threads');
const { scryptSync } = require('node:crypto');
parentPort.on('message', ({ id, secret, salt, length, params }) => {
  try {
    parentPort.postMessage({ id, hash: scryptSync(secret, Buffer.from(salt), length, params) });
  } catch (error) {
    parentPort.postMessage({ id, error: String(error && error.message) });
  }
});`;

interface Pending {
  readonly resolve: (hash: Buffer) => void;
  readonly reject: (error: Error) => void;
}

/**
 * Secret checks (scrypt against a stored hash) on a thread of their own, one at a time, with a bounded
 * queue. Node's asynchronous scrypt runs on libuv's thread pool, which the embedded file node needs for
 * every block it reads: a flood of secret checks there stalls file reads. Here it costs one thread, and
 * a check that finds the queue full is not run at all ({@link ScryptWorker.verify} answers `undefined`).
 */
export class ScryptWorker {
  readonly #maxQueued: number;
  readonly #pending = new Map<number, Pending>();
  #worker: Worker | undefined;
  #next = 0;

  /** @param maxQueued Checks that may wait or run at once; more are turned away. */
  constructor(maxQueued: number) {
    this.#maxQueued = maxQueued;
  }

  /** Checks waiting or running. */
  get queued(): number {
    return this.#pending.size;
  }

  /**
   * Whether `secret` matches `secretHash` (compared in constant time; a malformed hash never matches), or
   * `undefined` at once when the queue is full.
   */
  verify(secret: string, secretHash: string): Promise<boolean> | undefined {
    if (this.#pending.size >= this.#maxQueued) return undefined;
    const decoded = decodeSecretHash(secretHash);
    if (decoded === undefined) return Promise.resolve(false);
    const id = this.#next++;
    const worker = this.#start();
    return new Promise<Buffer>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ id, secret, salt: decoded.salt, length: decoded.hash.length, params: SECRET_SCRYPT_PARAMS });
    }).then((computed) => computed.length === decoded.hash.length && timingSafeEqual(computed, decoded.hash));
  }

  /** Stops the thread; checks still waiting fail. */
  async close(): Promise<void> {
    const worker = this.#worker;
    this.#worker = undefined;
    this.#fail(new Error('the secret checker stopped'));
    if (worker !== undefined) await worker.terminate();
  }

  #start(): Worker {
    if (this.#worker !== undefined) return this.#worker;
    const worker = new Worker(SOURCE, { eval: true });
    // An idle checker never keeps the process alive.
    worker.unref();
    worker.on('message', (message: { id: number; hash?: Uint8Array; error?: string }) => {
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      this.#pending.delete(message.id);
      if (message.hash !== undefined) pending.resolve(Buffer.from(message.hash));
      else pending.reject(new Error(message.error ?? 'scrypt failed'));
    });
    worker.on('error', (error) => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#fail(error);
    });
    worker.on('exit', () => {
      if (this.#worker === worker) this.#worker = undefined;
      this.#fail(new Error('the secret checker exited'));
    });
    this.#worker = worker;
    return worker;
  }

  #fail(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const p of pending) p.reject(error);
  }
}
