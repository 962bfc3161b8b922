import cluster, { type Worker } from 'node:cluster';
import { AskChannel, type AnswerHandler } from './ask-channel.js';
import { sendQuietly } from './ipc-send.js';
import { GATHER_TOPIC, isTollgateMessage, type AnswerMessage, type AskMessage, type GroupState, type PrimaryMessage, type WorkerMessage } from './messages.js';

/** Where the supervisor writes what happens to its workers (a pino logger fits). */
export interface SupervisorLogger {
  /** Starts, workers serving, the drain. */
  info(fields: object, message: string): void;
  /** A worker that died (with its exit code or signal), workers killed at the drain deadline. */
  warn(fields: object, message: string): void;
  /** A worker that failed to start. */
  error(fields: object, message: string): void;
}

/** Options of {@link superviseWorkers}. */
export interface SupervisorOptions {
  /** How many workers serve (at least 1). */
  readonly workers: number;
  /** What each worker is told to serve, handed to its {@link runWorker} callback (sent over IPC: keep it JSON). */
  readonly data?: unknown;
  /** The worker's script and arguments (default: this process's own, as `node:cluster` does). */
  readonly exec?: string;
  /** Arguments of the worker's script (default: this process's own). */
  readonly args?: readonly string[];
  /** How long a drain may take before the workers still running are killed (default 30 000 ms). */
  readonly drainTimeoutMs?: number;
  /** First restart delay of a worker that died; doubled per death in a row, up to `maxRestartDelayMs` (default 250 ms). */
  readonly restartDelayMs?: number;
  /** Longest restart delay (default 10 000 ms). */
  readonly maxRestartDelayMs?: number;
  /** A worker that served this long is healthy again: its next death restarts it after `restartDelayMs` (default 30 000 ms). */
  readonly stableAfterMs?: number;
  /** Answers to the workers' questions, by topic (the metrics plugin's `metrics`, for one). */
  readonly answers?: Readonly<Record<string, (payload: unknown, group: WorkerGroup) => unknown>>;
  /** Where the supervisor logs starts, deaths with their cause, restarts and the drain. */
  readonly logger: SupervisorLogger;
  /** Installs SIGTERM and SIGINT handlers that drain the group (default true). */
  readonly handleSignals?: boolean;
  /**
   * How connections reach workers: `round-robin` (default: the primary accepts and hands them out in
   * turn) or `os` (every worker accepts on the shared socket and the kernel picks; kept for measuring).
   */
  readonly scheduling?: 'round-robin' | 'os';
}

/** A running group of workers, seen from the primary. */
export interface WorkerGroup {
  /** The group's state as workers see it. */
  state(): GroupState;
  /** The process ids of the workers alive now. */
  pids(): number[];
  /** Resolves once every worker served at least once; rejects if one failed to start (the group is then stopped). */
  readonly serving: Promise<void>;
  /** Asks every connected worker `topic`; answers of the workers that replied within `timeoutMs`, in worker order. */
  askWorkers(topic: string, payload?: unknown, timeoutMs?: number): Promise<unknown[]>;
  /**
   * Drains every worker (calls in flight answered, WebSockets closed 1001) and resolves with the exit code:
   * 0 when all exited cleanly, 1 when the drain deadline or a second call ended it by killing them.
   */
  stop(reason?: string): Promise<number>;
  /** Resolves with the exit code once the group stopped (see {@link WorkerGroup.stop}). */
  readonly stopped: Promise<number>;
}

interface Member {
  readonly slot: number;
  readonly worker: Worker;
  readonly channel: AskChannel;
  readonly startedAt: number;
  serving: boolean;
}

/**
 * Runs `workers` processes that serve one port, with `node:cluster` in round-robin mode (the primary
 * accepts connections and hands them out in turn: see docs/deployment.md for why, measured). Each worker
 * calls {@link runWorker}. A worker that dies is replaced after a delay that doubles with each death in
 * a row (logged with its exit code or signal); the others keep serving. SIGTERM or SIGINT drains the
 * group: each worker answers its calls in flight and closes its WebSockets with 1001, then exits; the
 * primary exits 0 when all did. A second signal, or the drain deadline, kills what still runs.
 *
 * @example
 * ```ts
 * import cluster from 'node:cluster';
 * import { superviseWorkers, runWorker } from 'tollgate/plugins/workers';
 *
 * if (cluster.isPrimary) {
 *   const group = superviseWorkers({ workers: 2, data: config, logger });
 *   process.exitCode = await group.stopped;
 * } else {
 *   await runWorker(async (config) => {
 *     const gateway = await createGateway({ config, plugins });
 *     await gateway.listen();
 *     return gateway; // its close() drains the worker
 *   });
 * }
 * ```
 */
export function superviseWorkers(options: SupervisorOptions): WorkerGroup {
  if (!cluster.isPrimary) throw new Error('superviseWorkers runs in the primary process; workers call runWorker');
  if (!Number.isInteger(options.workers) || options.workers < 1) throw new Error(`workers: ${options.workers} is not a positive whole number`);
  const { logger } = options;
  const drainTimeoutMs = options.drainTimeoutMs ?? 30_000;
  const firstDelay = options.restartDelayMs ?? 250;
  const maxDelay = options.maxRestartDelayMs ?? 10_000;
  const stableAfterMs = options.stableAfterMs ?? 30_000;
  // Round robin: on Linux, the default would leave the kernel to pick among workers blocked in accept(),
  // which piles connections onto one or two of them (Node's docs; measured in docs/deployment.md).
  cluster.schedulingPolicy = options.scheduling === 'os' ? cluster.SCHED_NONE : cluster.SCHED_RR;
  cluster.setupPrimary({
    ...(options.exec === undefined ? {} : { exec: options.exec }),
    ...(options.args === undefined ? {} : { args: [...options.args] }),
  });

  const members = new Map<number, Member>(); // by slot
  const deaths = new Map<number, number>(); // deaths in a row, by slot
  const restarts = new Set<NodeJS.Timeout>();
  const handlers = new Map<string, AnswerHandler>();
  let draining = false;
  let restartCount = 0;
  let stopping: Promise<number> | undefined;
  let resolveStopped!: (code: number) => void;
  const stopped = new Promise<number>((resolve) => (resolveStopped = resolve));
  let resolveServing!: () => void;
  let rejectServing!: (error: Error) => void;
  const serving = new Promise<void>((resolve, reject) => { resolveServing = resolve; rejectServing = reject; });
  serving.catch(() => undefined);
  const everServed = new Set<number>();

  const state = (): GroupState => ({ workers: options.workers, serving: [...members.values()].filter((m) => m.serving).length, draining, restarts: restartCount });
  const broadcast = (): void => {
    const message: PrimaryMessage = { tollgate: 'group', state: state() };
    for (const member of members.values()) sendQuietly(member.worker, message);
  };

  const group: WorkerGroup = {
    state,
    pids: () => [...members.values()].map((m) => m.worker.process.pid!).filter((pid) => pid !== undefined),
    serving,
    async askWorkers(topic, payload, timeoutMs = 5_000) {
      const asked = [...members.values()].sort((a, b) => a.slot - b.slot).filter((m) => m.worker.isConnected()).map((m) => m.channel.ask(topic, payload, timeoutMs));
      const answers = await Promise.allSettled(asked);
      return answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    },
    stop: (reason = 'stop') => drain(reason),
    stopped,
  };
  // `gather`: a worker asks every worker (itself included) one question; plugins need nothing of the primary's code for it.
  handlers.set(GATHER_TOPIC, (payload) => {
    const { topic, payload: inner } = payload as { topic: string; payload?: unknown };
    return group.askWorkers(topic, inner);
  });
  for (const [topic, answer] of Object.entries(options.answers ?? {})) handlers.set(topic, (payload) => answer(payload, group));

  function fork(slot: number): void {
    const worker = cluster.fork({ TOLLGATE_WORKER: String(slot) });
    const member: Member = {
      slot,
      worker,
      channel: new AskChannel((message) => sendQuietly(worker, message)),
      startedAt: Date.now(),
      serving: false,
    };
    members.set(slot, member);
    // A failed IPC write or signal is reported here; the worker's exit (handled below) is what matters.
    worker.on('error', (error: Error) => logger.warn({ worker: slot, pid: worker.process.pid, err: error }, 'worker channel error'));
    worker.on('message', (message: unknown) => {
      if (!isTollgateMessage(message)) return;
      const m = message as AskMessage | AnswerMessage | WorkerMessage;
      if (m.tollgate === 'ask') void member.channel.receiveQuestion(m, handlers);
      else if (m.tollgate === 'answer') member.channel.receiveAnswer(m);
      // The worker listens now: messages sent before would have been lost.
      else if (m.tollgate === 'hello') sendQuietly(worker, { tollgate: 'start', data: options.data ?? null, worker: slot } satisfies PrimaryMessage);
      else if (m.tollgate === 'serving') {
        member.serving = true;
        everServed.add(slot);
        logger.info({ worker: slot, pid: worker.process.pid }, 'worker serving');
        broadcast();
        if (everServed.size === options.workers) resolveServing();
        if (draining) sendQuietly(worker, { tollgate: 'drain' } satisfies PrimaryMessage);
      } else if (m.tollgate === 'failed') {
        logger.error({ worker: slot, pid: worker.process.pid, reason: m.reason }, 'worker failed to start');
        // A worker that cannot start never will on a retry (bad config, port taken): stop the group.
        if (!everServed.has(slot)) {
          rejectServing(new Error(m.reason));
          void drain('a worker failed to start', 1);
        }
      }
    });
    worker.once('exit', (code, signal) => {
      members.delete(slot);
      member.channel.closed(`worker ${slot} exited`);
      const cause = signal !== null ? `killed by ${signal}` : `exited with code ${code}`;
      if (draining) {
        logger.info({ worker: slot, pid: worker.process.pid, code, signal }, `worker stopped (${cause})`);
        broadcast();
        if (members.size === 0) finish();
        return;
      }
      const lived = Date.now() - member.startedAt;
      const inARow = lived >= stableAfterMs ? 1 : (deaths.get(slot) ?? 0) + 1;
      deaths.set(slot, inARow);
      const delayMs = Math.min(maxDelay, firstDelay * 2 ** (inARow - 1));
      logger.warn({ worker: slot, pid: worker.process.pid, code, signal, livedMs: lived, restartInMs: delayMs }, `worker died (${cause}); restarting it`);
      broadcast();
      const timer = setTimeout(() => {
        restarts.delete(timer);
        if (draining) return;
        restartCount++;
        fork(slot);
      }, delayMs);
      restarts.add(timer);
    });
  }

  let exitCode = 0;
  let deadline: NodeJS.Timeout | undefined;
  function finish(): void {
    clearTimeout(deadline);
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
    resolveStopped(exitCode);
  }
  function killAll(why: string): void {
    exitCode = 1;
    logger.warn({ workers: [...members.values()].map((m) => m.worker.process.pid) }, `${why}: killing the workers still running`);
    for (const member of members.values()) member.worker.process.kill('SIGKILL');
    if (members.size === 0) finish();
  }
  function drain(reason: string, code = 0): Promise<number> {
    if (stopping !== undefined) {
      killAll(`${reason} again during the drain`);
      return stopping;
    }
    exitCode = code;
    draining = true;
    for (const timer of restarts) clearTimeout(timer);
    restarts.clear();
    logger.info({ reason, workers: members.size, drainTimeoutMs }, 'draining the workers');
    broadcast();
    for (const member of members.values()) {
      if (!sendQuietly(member.worker, { tollgate: 'drain' } satisfies PrimaryMessage)) member.worker.process.kill('SIGTERM');
    }
    deadline = setTimeout(() => killAll(`the drain took longer than ${drainTimeoutMs} ms`), drainTimeoutMs);
    deadline.unref();
    if (members.size === 0) finish();
    stopping = stopped;
    return stopping;
  }
  const onSignal = (signal: NodeJS.Signals): void => void drain(signal);
  if (options.handleSignals !== false) {
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  }

  for (let slot = 1; slot <= options.workers; slot++) fork(slot);
  return group;
}
