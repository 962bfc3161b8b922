import type { CallBatch, RequestContext } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply, UpstreamRequest } from '../contracts/upstream.js';
import { UpstreamFailure } from '../contracts/upstream-failure.js';
import type { CancelSignal } from '../contracts/cancel-signal.js';
import { requestUpstream } from '../context/request-upstream.js';

/**
 * Longest time a call waiting in dispatch holds its upstream request for the batch's other calls that
 * are still in earlier stages (a slow ledger, a stage waiting on something outside the batch). Most
 * batches never wait for it: the request leaves as soon as every running call of the batch has reached
 * dispatch or finished.
 */
export const BATCH_HOLD_MS = 10;

/** Upstreams that answered a batch request with something other than a batch answer: sent one call at a time from then on. */
const refusesBatches = new WeakSet<Upstream>();

interface Entry {
  readonly ctx: RequestContext;
  readonly request: UpstreamRequest;
  readonly timeoutMs: number;
  readonly signal: CancelSignal;
  settled: boolean;
  resolve(reply: UpstreamReply): void;
  reject(error: unknown): void;
}

const cancelled = (): UpstreamFailure => new UpstreamFailure('reset', 'the call was cancelled', { maybeReceived: true });

/**
 * The calls of one client batch on their way upstream. Each call of the batch counts as running from
 * the moment the engine starts it until it finishes, except while it waits in dispatch (or in
 * {@link ClientBatch.idle}). Calls waiting in dispatch are queued per upstream; when no call of the batch
 * is running any more (or after {@link BATCH_HOLD_MS}), each queue leaves as one upstream request: a
 * batch request through the protocol's {@link BatchCodec} when it holds several calls, the call's own
 * request when it holds one. Failover, breakers and deadlines stay per call: a call whose answer is a
 * failure goes back to dispatch's loop and, with its next upstream, into the next queue.
 */
export class ClientBatch implements CallBatch {
  #running = 0;
  #checkQueued = false;
  #timer: NodeJS.Timeout | undefined;
  readonly #queues = new Map<Upstream, Entry[]>();

  /** A call of the batch started. */
  enter(): void {
    this.#running++;
  }

  /** A call of the batch finished. */
  leave(): void {
    this.#running--;
    this.#check();
  }

  send(ctx: RequestContext, upstream: Upstream, request: UpstreamRequest, timeoutMs: number, signal: CancelSignal): Promise<UpstreamReply> {
    if (ctx.network.protocol.batch === undefined || refusesBatches.has(upstream) || signal.aborted) {
      // Sent alone, and waiting on the upstream: the batch's other calls need not wait for it.
      return this.idle(ctx, requestUpstream(ctx, upstream, request, timeoutMs, signal));
    }
    return new Promise<UpstreamReply>((resolve, reject) => {
      const onAbort = (): void => {
        const queue = this.#queues.get(upstream);
        const at = queue?.indexOf(entry) ?? -1;
        if (at !== -1) queue!.splice(at, 1);
        entry.reject(cancelled());
      };
      const settle = (): boolean => {
        if (entry.settled) return false;
        entry.settled = true;
        signal.removeEventListener('abort', onAbort);
        this.#running++;
        return true;
      };
      const entry: Entry = {
        ctx,
        request,
        timeoutMs,
        signal,
        settled: false,
        resolve: (reply) => settle() && resolve(reply),
        reject: (error) => settle() && reject(error),
      };
      signal.addEventListener('abort', onAbort, { once: true });
      let queue = this.#queues.get(upstream);
      if (queue === undefined) this.#queues.set(upstream, (queue = []));
      queue.push(entry);
      this.#running--;
      this.#check();
    });
  }

  idle<T>(_ctx: RequestContext, promise: Promise<T>): Promise<T> {
    this.#running--;
    this.#check();
    return promise.then(
      (value) => {
        this.#running++;
        return value;
      },
      (error: unknown) => {
        this.#running++;
        throw error;
      },
    );
  }

  // Checked a microtask later: the engine starts the calls of a batch one after the other, and a call
  // that reaches dispatch synchronously must not leave before its siblings have started.
  #check(): void {
    if (this.#queues.size === 0 || this.#checkQueued) return;
    this.#checkQueued = true;
    queueMicrotask(() => {
      this.#checkQueued = false;
      if (this.#running <= 0) this.#flush();
      else this.#timer ??= setTimeout(() => this.#flush(), BATCH_HOLD_MS);
    });
  }

  #flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const queues = [...this.#queues];
    this.#queues.clear();
    for (const [upstream, entries] of queues) {
      if (entries.length === 1) sendAlone(upstream, entries[0]!);
      else if (entries.length > 1) sendTogether(upstream, entries);
    }
  }
}

function sendAlone(upstream: Upstream, entry: Entry): void {
  requestUpstream(entry.ctx, upstream, entry.request, entry.timeoutMs, entry.signal).then(entry.resolve, entry.reject);
}

/**
 * One upstream request for several calls. A call cancelled meanwhile fails at once and the others still
 * get their answers; the request itself is aborted only when every call it carries was cancelled. A
 * call whose own timeout is shorter than the request's fails with a timeout when it runs out.
 */
function sendTogether(upstream: Upstream, entries: Entry[]): void {
  const protocol = entries[0]!.ctx.network.protocol;
  const codec = protocol.batch!;
  const controller = new AbortController();
  const live = new Set(entries);
  const timers: NodeJS.Timeout[] = [];
  const drop = (entry: Entry, error: unknown): void => {
    if (!live.delete(entry)) return;
    entry.reject(error);
    if (live.size === 0) controller.abort(error);
  };
  const timeoutMs = Math.max(...entries.map((entry) => entry.timeoutMs));
  const listeners = entries.map((entry) => {
    const onAbort = (): void => drop(entry, cancelled());
    entry.signal.addEventListener('abort', onAbort, { once: true });
    if (entry.timeoutMs < timeoutMs) {
      timers.push(setTimeout(() => drop(entry, new UpstreamFailure('timeout', `timed out after ${entry.timeoutMs} ms`, { maybeReceived: true })), entry.timeoutMs));
    }
    return onAbort;
  });
  // Once the request is over, nothing of it stays attached to the calls.
  const done = (): void => {
    for (const timer of timers) clearTimeout(timer);
    entries.forEach((entry, i) => entry.signal.removeEventListener('abort', listeners[i]!));
  };
  const calls = entries.map((entry) => entry.ctx);
  // The calls of one client batch share their connection, so its channel.
  requestUpstream(calls[0]!, upstream, codec.encode(calls), timeoutMs, controller.signal).then(
    (reply) => {
      done();
      const answers = codec.split(reply, calls);
      if (answers === undefined) {
        // An error for the whole request (HTTP 5xx, a capacity error) is each call's failure, and each
        // fails over; any other answer means the upstream does not take batches.
        const wholeFailure = protocol.inspect(reply, calls[0]!) !== undefined;
        if (!wholeFailure) refusesBatches.add(upstream);
        for (const entry of live) {
          if (wholeFailure) entry.resolve(reply);
          else sendAlone(upstream, entry);
        }
        return;
      }
      entries.forEach((entry, i) => {
        if (!live.has(entry)) return;
        const answer = answers[i]!;
        if (answer instanceof UpstreamFailure) entry.reject(answer);
        else entry.resolve(answer);
      });
    },
    (error: unknown) => {
      done();
      for (const entry of live) entry.reject(error);
    },
  );
}
