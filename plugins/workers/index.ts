/**
 * Worker processes: `superviseWorkers()` runs n workers of one server on one port (`node:cluster`,
 * round robin), replaces a worker that dies (with backoff), and drains them all on SIGTERM;
 * `runWorker()` is a worker's side of it. Not a gateway plugin: it runs around gateways, in the
 * primary and in each worker. Plugins that must see the whole group (metrics, readiness) read
 * `workerMembership()`.
 *
 * @packageDocumentation
 */
export { superviseWorkers, type SupervisorOptions, type SupervisorLogger, type WorkerGroup } from './supervisor.js';
export { runWorker, workerMembership, type Closable, type WorkerMembership } from './worker.js';
export { workerCount } from './worker-count.js';
export type { GroupState } from './messages.js';
export type { AnswerHandler } from './ask-channel.js';
