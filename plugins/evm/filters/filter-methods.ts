/**
 * The polling filters (`eth_newFilter`, `eth_newBlockFilter`, `eth_newPendingTransactionFilter`,
 * `eth_getFilterChanges`, `eth_getFilterLogs`, `eth_uninstallFilter`), served by the gateway itself:
 * a node's filter lives in that node's memory and is lost on failover or on another instance, so the
 * gateway keeps each filter (its criteria and how far delivery went) in the deployment's
 * {@link FilterStore} and answers polls from whichever node serves. Filters expire after `idleMs`
 * without a poll (a node's 5 minutes) and a key holds at most `maxPerKey` of them.
 *
 * @module
 */
import { Errors, GatewayError, type Clock } from '../../../core/plugin-api.js';
import { NodeAnswerError, type LimitsInput, type MethodDefinition } from '../../../core/family-api.js';
import type { FilterLimits, FilterStore } from '../../../core/store-api.js';
import { answerWith, answerWithNodeError } from '../gateway-answer.js';
import { logFilter } from '../log-filter.js';
import { noParams, positional, quantity } from '../schemas.js';
import { changesAfter, initialCursor, type FilterSpec } from './filter-polling.js';

/** What the filter methods need: where filters live, their limits, and the time. */
export interface FilterDependencies {
  /** The deployment's filter store (resolved on first use, once every plugin registered). */
  readonly store: () => FilterStore;
  /** Filters per key and idle expiry. */
  readonly limits: FilterLimits;
  /** The gateway's clock. */
  readonly clock: Clock;
}

/** A node's answer for an unknown filter id (geth's words). */
const NOT_FOUND = { code: -32000, message: 'filter not found' } as const;

const filterId = { ...quantity, description: 'a filter id (0x followed by hex digits)' };

function keyOf({ ctx }: LimitsInput): string {
  // validate and meter ran: the call has a key. A filter belongs to the key that made it.
  return ctx.key?.id ?? '';
}

/** Runs `serve`; a node's error answer becomes the call's answer, as it would without the gateway. */
async function serving(input: LimitsInput, serve: () => Promise<void>): Promise<undefined> {
  try {
    await serve();
  } catch (error) {
    if (!(error instanceof NodeAnswerError)) throw error;
    answerWithNodeError(input.ctx, error.error);
  }
  return undefined;
}

/** The six filter methods, with their hooks bound to `deps`. */
export function filterMethods(deps: FilterDependencies): MethodDefinition[] {
  const { limits, clock } = deps;
  const create = (spec: (input: LimitsInput) => FilterSpec) => (input: LimitsInput) =>
    serving(input, async () => {
      const filter = spec(input);
      const cursor = await initialCursor(filter, input.network);
      const id = await deps.store().create(keyOf(input), { spec: JSON.stringify(filter), cursor }, limits, clock.now());
      if (id === undefined) {
        throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: `too many filters: a key holds at most ${limits.maxPerKey}; uninstall some (eth_uninstallFilter) or let them expire` });
      }
      answerWith(input.ctx, id);
    });
  const idOf = (input: LimitsInput): string => ((input.params as unknown[])[0] as string).toLowerCase();

  return [
    {
      name: 'eth_newFilter',
      params: positional([logFilter], 1),
      paramNames: ['filter'],
      credits: 80,
      failover: false,
      idempotent: false,
      description: 'Creates a log filter, kept by the gateway: its changes are the logs of the blocks after it was made.',
      limits: create((input) => {
        const { fromBlock, toBlock, address, topics, blockHash } = ((input.params as unknown[])[0] ?? {}) as Record<string, unknown>;
        if (blockHash !== undefined && blockHash !== null) throw new GatewayError(Errors.INVALID_PARAMS, { message: 'invalid argument 0 (filter): a filter follows new blocks and cannot take blockHash; use eth_getLogs' });
        return { kind: 'logs', criteria: { fromBlock, toBlock, address, topics } };
      }),
    },
    {
      name: 'eth_newBlockFilter',
      params: noParams,
      paramNames: [],
      credits: 80,
      failover: false,
      idempotent: false,
      description: 'Creates a block filter, kept by the gateway: its changes are the hashes of new blocks.',
      limits: create(() => ({ kind: 'blocks' })),
    },
    {
      name: 'eth_newPendingTransactionFilter',
      params: positional([{ type: ['boolean', 'null'] }], 0),
      paramNames: ['fullTransactions'],
      credits: 80,
      failover: false,
      idempotent: false,
      description: 'Creates a pending-transaction filter, kept by the gateway: its changes are the hashes of transactions newly seen in the pending block of the node that answers.',
      limits: create(() => ({ kind: 'pending' })),
    },
    {
      name: 'eth_getFilterChanges',
      params: positional([filterId], 1),
      paramNames: ['filterId'],
      credits: 80,
      failover: false,
      idempotent: false,
      description: 'What a filter matched since its last poll, from whichever node serves; each change is delivered once.',
      limits: (input) =>
        serving(input, async () => {
          const id = idOf(input);
          const stored = await deps.store().touch(keyOf(input), id, limits.idleMs, clock.now());
          if (stored === undefined) return answerWithNodeError(input.ctx, NOT_FOUND);
          const { changes, cursor } = await changesAfter(JSON.parse(stored.spec) as FilterSpec, stored.cursor, input.network);
          // Only the poll that moves the cursor delivers: one that lost the race to another instance
          // answers nothing, since that instance delivered these changes.
          const moved = cursor === stored.cursor || (await deps.store().advance(keyOf(input), id, stored.cursor, cursor, limits.idleMs, clock.now()));
          answerWith(input.ctx, moved ? changes : []);
        }),
    },
    {
      name: 'eth_getFilterLogs',
      params: positional([filterId], 1),
      paramNames: ['filterId'],
      credits: 255,
      failover: false,
      idempotent: true,
      description: 'Every log a log filter matches over its whole range (as eth_getLogs with its criteria).',
      limits: (input) =>
        serving(input, async () => {
          const stored = await deps.store().touch(keyOf(input), idOf(input), limits.idleMs, clock.now());
          const spec = stored === undefined ? undefined : (JSON.parse(stored.spec) as FilterSpec);
          if (spec?.kind !== 'logs') return answerWithNodeError(input.ctx, NOT_FOUND);
          const { fromBlock, toBlock, address, topics } = spec.criteria;
          answerWith(input.ctx, await input.network.rpc('eth_getLogs', [{ fromBlock, toBlock, address, topics }]));
        }),
    },
    {
      name: 'eth_uninstallFilter',
      params: positional([filterId], 1),
      paramNames: ['filterId'],
      credits: 80,
      failover: false,
      idempotent: true,
      description: 'Removes a filter; true when it existed.',
      limits: (input) =>
        serving(input, async () => {
          answerWith(input.ctx, await deps.store().remove(keyOf(input), idOf(input), clock.now()));
        }),
    },
  ];
}
