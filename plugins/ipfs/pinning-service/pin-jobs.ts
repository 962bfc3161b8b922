import { Errors, GatewayError, type RequestContext, type StageDependencies, type UpstreamReply } from '../../../core/plugin-api.js';
import type { PinRecord, PinStore } from '../../../core/store-api.js';
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
  /** The pin request's id (its pin id in the store). */
  readonly pinId: string;
  readonly cid: string;
  readonly name?: string;
  /** The key's plan's `storageBytes` (undefined: none), checked once the pin's weight is known. */
  readonly limitBytes: number | undefined;
  /** A CID the request replaces: the node keeps it until this pin is settled, then drops it unless a key pins it. */
  readonly replaces?: string;
  /**
   * A request a gateway left unfinished (it stopped while the request was `queued` or `pinning`), taken
   * up again: it may start from `pinning` too.
   */
  readonly resumed?: boolean;
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
 * dropped from the node when no pin holds its content.
 *
 * Every change of state is a compare-and-set in the store (`queued` to `pinning`, `pinning` to `pinned` or
 * `failed`), so two gateways never both take a queued request, and of two that drive one `pinning`
 * request (one resumed it after a restart while the other still works on it) the first to settle wins:
 * the other changes nothing, and has the node drop only content no pin holds. The node's pin is
 * idempotent, so the double work is all it costs.
 */
export class PinJobs {
  readonly #deps: PinJobDeps;
  readonly #running = new Set<Promise<void>>();
  /** The pin requests this process works on (`<key id> <pin id>`): not resumed twice. */
  readonly #driving = new Set<string>();
  /** The keys whose unfinished requests this process has taken up. */
  readonly #resumedKeys = new Set<string>();
  /** Set once the gateway stops: work cut short by it is left for the next gateway to take up. */
  #stopping = false;

  constructor(deps: PinJobDeps) {
    this.#deps = deps;
  }

  /** Starts `job` for the call `ctx` (whose route reaches the node). */
  start(ctx: RequestContext, job: PinJob): void {
    const driving = `${job.keyId} ${job.pinId}`;
    if (this.#driving.has(driving)) return;
    this.#driving.add(driving);
    const run = this.#run(ctx, job)
      .catch((error: unknown) => this.#deps.logger.warn({ call: ctx.id, cid: job.cid, err: error }, 'pin request could not be settled'))
      .finally(() => {
        this.#running.delete(run);
        this.#driving.delete(driving);
      });
    this.#running.add(run);
  }

  /**
   * Takes up, on the key's first Pinning Service API call since this process started, the key's requests
   * a gateway left `queued` or `pinning` when it stopped, through this call's route and within the key's
   * plan (`limitBytes`). A request this process already works on is left to its job.
   */
  async resume(ctx: RequestContext, keyId: string, limitBytes: number | undefined): Promise<void> {
    if (this.#resumedKeys.has(keyId)) return;
    this.#resumedKeys.add(keyId);
    let pins: PinRecord[];
    try {
      pins = await this.#deps.store().list(keyId);
    } catch (error) {
      // Read again on the key's next call.
      this.#resumedKeys.delete(keyId);
      throw error;
    }
    for (const pin of pins) {
      if (pin.requestId === undefined || (pin.status !== 'queued' && pin.status !== 'pinning')) continue;
      this.#deps.logger.info({ call: ctx.id, cid: pin.cid, requestId: pin.requestId, status: pin.status }, 'pin request left unfinished: taken up again');
      this.start(ctx, { keyId, pinId: pin.requestId, cid: pin.cid, ...(pin.name === undefined ? {} : { name: pin.name }), limitBytes, resumed: true });
    }
  }

  /**
   * The gateway stops: a request whose node work is cut short now stays `queued` or `pinning`, not
   * `failed`, so the next gateway to serve its key takes it up (see {@link resume}).
   */
  stop(): void {
    this.#stopping = true;
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
    const { keyId, pinId, cid } = job;
    const started = await store.settle(keyId, pinId, { status: 'pinning', from: job.resumed === true ? ['queued', 'pinning'] : ['queued'] }, undefined);
    // Deleted before it began, or taken by another gateway: nothing to do.
    if (!started.ok) return;
    let failure: string;
    try {
      const pinned = await this.#deps.node.pin(ctx, cid, job.name, this.#deps.pinTimeoutMs);
      if (pinned.ok) {
        const weighed = await this.#deps.node.dagBytes(ctx, cid);
        if (weighed.ok) {
          const settled = await store.settle(keyId, pinId, { status: 'pinned', bytes: weighed.value, from: ['pinning'] }, job.limitBytes);
          if (settled.ok) return;
          // Deleted meanwhile, or settled by another gateway: the node keeps the content only for a pin.
          if (settled.missing === true || settled.moved === true) return void (await this.release(ctx, keyId, cid));
          failure = storageLimitReached(job.limitBytes!, settled.storedBytes, weighed.value).message;
        } else {
          failure = nodeMessage(weighed.reply);
        }
      } else {
        const message = nodeMessage(pinned.reply);
        failure = /context deadline exceeded/.test(message) ? this.#late(cid) : message;
      }
    } catch (error) {
      // Cut short by the gateway stopping: left `pinning`, for the next gateway.
      if (this.#stopping) return;
      // The node did not answer in time (past pinTimeoutMs, or cut by the network's failover deadline).
      failure = GatewayError.is(error) && error.entry === Errors.UPSTREAM_TIMEOUT ? `the node did not finish pinning ${cid} in time` : (error as Error).message;
    }
    // A node answer cut short by the gateway stopping is no verdict on the content: left for the next gateway.
    if (this.#stopping) return;
    await store.settle(keyId, pinId, { status: 'failed', bytes: 0, statusDetails: failure, from: ['pinning'] }, undefined);
    // The node may hold it (pinned, then refused by the allowance): it keeps it only while a pin holds it.
    await this.release(ctx, keyId, cid);
  }

  #late(cid: string): string {
    return `the node could not pin ${cid} within ${this.#deps.pinTimeoutMs} ms`;
  }

  /** Has the node unpin `cid` unless a pin holds it: another key's, or another of this key's (failed pins do not count). */
  async release(ctx: RequestContext, keyId: string, cid: string): Promise<void> {
    const store = this.#deps.store();
    if (await store.pinnedByOthers(keyId, cid)) return;
    if ((await store.pinsOf(keyId, cid)).some((pin) => pin.status !== 'failed')) return;
    const unpinned = await this.#deps.node.unpin(ctx, cid);
    if (!unpinned.ok) this.#deps.logger.warn({ call: ctx.id, cid, reason: nodeMessage(unpinned.reply) }, 'the node did not unpin content no key pins');
  }
}
