import cluster from 'node:cluster';
import { AskChannel, type AnswerHandler } from './ask-channel.js';
import { sendQuietly } from './ipc-send.js';
import { GATHER_TOPIC, isTollgateMessage, type AnswerMessage, type AskMessage, type GroupState, type PrimaryMessage, type WorkerMessage } from './messages.js';

/** What a worker serves: something that drains and releases everything in `close()` (a gateway does). */
export interface Closable {
  /** Stops taking new work, finishes what is in flight, and releases what is open. */
  close(): Promise<void>;
}

/** This process's place in its worker group (see {@link workerMembership}). */
export interface WorkerMembership {
  /** The worker's number in the group, 1 to n (a replacement takes the number of the worker it replaces). */
  readonly worker: number;
  /** The group's state, as the primary last said. */
  group(): GroupState;
  /** Asks the primary `topic` (answered by the supervisor's `answers`). */
  askPrimary(topic: string, payload?: unknown, timeoutMs?: number): Promise<unknown>;
  /** Answers the primary's questions on `topic` (the metrics plugin answers `metrics-json`). */
  answer(topic: string, handler: AnswerHandler): void;
  /** Asks every worker of the group (this one included) `topic`; the answers of those that replied. */
  gather(topic: string, payload?: unknown): Promise<unknown[]>;
}

let membership: WorkerMembership | undefined;

/** This process's membership of a worker group once {@link runWorker} received its start, else undefined. */
export function workerMembership(): WorkerMembership | undefined {
  return membership;
}

/** Exits once stdout and stderr are flushed (a piped stream writes asynchronously). */
function exitAfterFlush(code: number): void {
  let waiting = 2;
  const done = (): void => { if (--waiting === 0) process.exit(code); };
  process.stdout.write('', done);
  process.stderr.write('', done);
}

/**
 * The worker side of {@link superviseWorkers}: waits for what the primary says to serve, runs `serve`
 * with it, and reports the worker serving. When the primary orders a drain (or this process gets SIGTERM
 * or SIGINT), it closes what `serve` returned, so that calls in flight are answered and WebSockets
 * closed with 1001, and exits 0 (1 when closing failed). A worker whose `serve` throws reports why and
 * exits 1. Resolves once serving.
 */
export async function runWorker<T = unknown>(serve: (data: T, membership: WorkerMembership) => Promise<Closable>): Promise<void> {
  if (!cluster.isWorker) throw new Error('runWorker runs in a worker process that superviseWorkers forked');
  const send = (message: WorkerMessage | AskMessage | AnswerMessage): boolean => sendQuietly(process, message);
  const channel = new AskChannel(send);
  const handlers = new Map<string, AnswerHandler>();
  let state: GroupState = { workers: 1, serving: 0, draining: false, restarts: 0 };
  let served: Closable | undefined;
  let closing = false;

  const close = (): void => {
    if (closing) return;
    closing = true;
    const done = served === undefined ? Promise.resolve() : served.close();
    done.then(() => exitAfterFlush(0), (error: unknown) => {
      process.stderr.write(`worker ${membership?.worker ?? '?'}: closing failed: ${(error as Error)?.stack ?? String(error)}\n`);
      exitAfterFlush(1);
    });
  };
  process.on('SIGTERM', close);
  process.on('SIGINT', close);
  // The primary is gone (killed): nothing will hand this worker connections or a drain order.
  process.on('disconnect', close);

  const start = await new Promise<{ data: T; worker: number }>((resolve) => {
    process.on('message', (message: unknown) => {
      if (!isTollgateMessage(message)) return;
      const m = message as PrimaryMessage | AskMessage | AnswerMessage;
      if (m.tollgate === 'start') resolve({ data: m.data as T, worker: m.worker });
      else if (m.tollgate === 'group') state = m.state;
      else if (m.tollgate === 'drain') close();
      else if (m.tollgate === 'ask') void channel.receiveQuestion(m, handlers);
      else if (m.tollgate === 'answer') channel.receiveAnswer(m);
    });
    send({ tollgate: 'hello' });
  });
  membership = {
    worker: start.worker,
    group: () => state,
    askPrimary: (topic, payload, timeoutMs = 10_000) => channel.ask(topic, payload, timeoutMs),
    answer: (topic, handler) => void handlers.set(topic, handler),
    gather: async (topic, payload) => (await channel.ask(GATHER_TOPIC, { topic, payload }, 10_000)) as unknown[],
  };
  try {
    served = await serve(start.data, membership);
  } catch (error) {
    send({ tollgate: 'failed', reason: (error as Error)?.message ?? String(error) });
    exitAfterFlush(1);
    return;
  }
  if (closing) {
    // A drain arrived while starting: close what just started.
    closing = false;
    close();
    return;
  }
  send({ tollgate: 'serving' });
}
