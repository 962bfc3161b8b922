import { Errors, GatewayError, type PinStore, type RequestContext, type StageDependencies, type UpstreamReply } from '../../../core/plugin-api.js';
import { kuboErrorMessage } from '../kubo-errors.js';
import type { NodePinRequests } from '../node-pins.js';
import { storageLimitReached } from '../storage-limit.js';

/** What the pin jobs need. */
export interface PinJobDeps {
  readonly store: () => PinStore;
  readonly node: NodePinRequests;
  /** See `PinningServiceSettings.pinTimeoutMs`. */
  readonly pinTimeoutMs: number;
  readonly logger: StageDependencies['logger'];
}

/** One pin request for the node to work on. */
export interface PinJob {
  readonly keyId: string;
  readonly cid: string;
  readonly name?: string;
  /** The key's plan's `storageBytes` (undefined: none), checked once the pin's weight is known. */
  readonly limitBytes: number | undefined;
  /** A CID the request replaces: the node keeps it until this pin is settled, then drops it unless a key pins it. */
  readonly replaces?: string;
}

function nodeMessage(reply: UpstreamReply): string {
  const body = reply.body instanceof Uint8Array ? reply.body : new Uint8Array();
  return kuboErrorMessage(body) ?? `the node answered HTTP ${reply.status}`;
}

/**
 * The node's side of pin requests, run after the request is answered (`queued`): the pin moves to
 * `pinning`, the node pins the content (fetching it, up to `pinTimeoutMs`), the DAG is weighed and the
 * pin settled as `pinned` within the key's allowance, else `failed` with the reason in its status
 * details. The node requests go through the call's route (`NodePinRequests`). A pin deleted meanwhile is
 * dropped from the node when no key pins its content.
 */
export class PinJobs {
  readonly #deps: PinJobDeps;
  readonly #running = new Set<Promise<void>>();

  constructor(deps: PinJobDeps) {
    this.#deps = deps;
  }

  /** Starts `job` for the call `ctx` (whose route reaches the node). */
  start(ctx: RequestContext, job: PinJob): void {
    const run = this.#run(ctx, job)
      .catch((error: unknown) => this.#deps.logger.warn({ call: ctx.id, cid: job.cid, err: error }, 'pin request could not be settled'))
      .finally(() => this.#running.delete(run));
    this.#running.add(run);
  }

  /** Waits for the jobs in flight (a gateway closing; tests). */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async #run(ctx: RequestContext, job: PinJob): Promise<void> {
    try {
      await this.#pin(ctx, job);
    } finally {
      if (job.replaces !== undefined) await this.release(ctx, job.keyId, job.replaces);
    }
  }

  async #pin(ctx: RequestContext, job: PinJob): Promise<void> {
    const store = this.#deps.store();
    const { keyId, cid } = job;
    const started = await store.settle(keyId, cid, { status: 'pinning' }, undefined);
    // Deleted before it began: nothing to do.
    if (!started.ok) return;
    let failure: string;
    try {
      const pinned = await this.#deps.node.pin(ctx, cid, job.name, this.#deps.pinTimeoutMs);
      if (pinned.ok) {
        const weighed = await this.#deps.node.dagBytes(ctx, cid);
        if (weighed.ok) {
          const settled = await store.settle(keyId, cid, { status: 'pinned', bytes: weighed.value }, job.limitBytes);
          if (settled.ok) return;
          if (settled.missing === true) return void (await this.release(ctx, keyId, cid));
          failure = storageLimitReached(job.limitBytes!, settled.storedBytes, weighed.value).message;
        } else {
          failure = nodeMessage(weighed.reply);
        }
      } else {
        const message = nodeMessage(pinned.reply);
        failure = /context deadline exceeded/.test(message) ? this.#late(cid) : message;
      }
    } catch (error) {
      // The node did not answer in time (past pinTimeoutMs, or cut by the network's failover deadline).
      failure = GatewayError.is(error) && error.entry === Errors.UPSTREAM_TIMEOUT ? `the node did not finish pinning ${cid} in time` : (error as Error).message;
    }
    const failed = await store.settle(keyId, cid, { status: 'failed', bytes: 0, statusDetails: failure }, undefined);
    // The node may hold it (pinned, then refused by the allowance): it keeps it only for another key.
    if (failed.ok || failed.missing === true) await this.release(ctx, keyId, cid);
  }

  #late(cid: string): string {
    return `the node could not pin ${cid} within ${this.#deps.pinTimeoutMs} ms`;
  }

  /** Has the node unpin `cid` unless a key pins it (this key's failed pin does not count). */
  async release(ctx: RequestContext, keyId: string, cid: string): Promise<void> {
    const store = this.#deps.store();
    if (await store.pinnedByOthers(keyId, cid)) return;
    const own = await store.get(keyId, cid);
    if (own !== undefined && own.status !== 'failed') return;
    const unpinned = await this.#deps.node.unpin(ctx, cid);
    if (!unpinned.ok) this.#deps.logger.warn({ call: ctx.id, cid, reason: nodeMessage(unpinned.reply) }, 'the node did not unpin content no key pins');
  }
}
