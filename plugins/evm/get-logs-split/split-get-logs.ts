/**
 * `eth_getLogs` split on the gateway: a query wider than the node serves becomes several narrower node
 * queries, run a few at a time and merged in block order into one answer, billed once at the method's
 * price.
 *
 * @module
 */
import { Errors, GatewayError, keyOf } from '../../../core/plugin-api.js';
import { NodeAnswerError, type LimitsInput, type NetworkRuntime } from '../../../core/family-api.js';
import { answerWith, answerWithChargedError, answerWithNodeError } from '../gateway-answer.js';
import { isRangeTooWide } from './range-too-wide.js';
import { takeSplitSlot } from './split-slots.js';
import { lookupHead } from '../head-lookup.js';
import type { GetLogsSplitSettings } from './settings.js';

/** The whole call's limits: the spec's 10,000 results and 10 seconds. */
export interface SplitLimits {
  /** Most logs the merged answer may carry. */
  readonly maxResults: number;
  /** Longest the whole call may run, in milliseconds. */
  readonly timeoutMs: number;
}

/** An inclusive block range. */
interface Range {
  readonly from: number;
  readonly to: number;
}

/** Per-network state: the narrowest range a node asked for, so later calls start there. */
const LEARNED_RANGE = 'evm.getLogs.learnedRange';

const hex = (n: number): string => `0x${n.toString(16)}`;

function quantityOf(value: unknown): number | undefined {
  return typeof value === 'string' && /^0[xX][0-9a-fA-F]{1,13}$/.test(value) ? Number.parseInt(value.slice(2), 16) : undefined;
}

/** Resolves a block parameter to a number: absent and `latest`/`pending` are the head; undefined when it cannot be resolved. */
async function blockNumberOf(tag: unknown, network: NetworkRuntime, head: () => Promise<number>): Promise<number | undefined> {
  if (tag === undefined || tag === null || tag === 'latest' || tag === 'pending') return head();
  if (tag === 'earliest') return 0;
  if (tag === 'safe' || tag === 'finalized') {
    const block = (await lookupHead(network, 'eth_getBlockByNumber', [tag, false])) as { number?: unknown } | null;
    return quantityOf(block?.number);
  }
  return quantityOf(tag);
}

/** Splits `range` into parts at most `width` blocks wide, lazily (a range of millions of blocks costs nothing up front). */
function* parts(range: Range, width: number): Generator<Range> {
  for (let from = range.from; from <= range.to; from += width) yield { from, to: Math.min(range.to, from + width - 1) };
}

/** The node's error that ends the call as its answer (a query the node refuses for another reason than its width). */
class NodeAnswer {
  constructor(readonly error: NodeAnswerError) {}
}

/**
 * Serves an `eth_getLogs` call by parts when `settings.split` is on and the filter names a block range
 * (not a `blockHash`): the range is cut into parts of `maxBlockRange` blocks (or the narrowest a node of
 * this network asked for), at most `concurrency` node queries run at once, and a part a node finds too
 * wide (`isRangeTooWide`) is halved and asked again. The parts' logs are merged in block order into
 * one answer for the client. The limits are the whole call's: more than `maxResults` logs, or more than
 * `timeoutMs`, ends it with `LIMIT_EXCEEDED` as its answer, charged once at the method's price (the
 * nodes did the work; a refund would make the heaviest queries free to repeat). Another error of a node
 * is the call's answer, as it would be unsplit. A call whose range spans more than one part at the start
 * takes one of the key's `callsPerKey` slots on the network until its last node query ended (past its
 * answer, when the time limit cut it short); without a free slot it is refused with
 * `CONCURRENCY_LIMITED` before any node query, uncharged. Returns false, doing nothing, when the call is
 * to go to a node as it is (splitting off, a `blockHash` filter, a range that ends before it starts or
 * cannot be resolved).
 */
export async function splitGetLogs(input: LimitsInput, settings: GetLogsSplitSettings, limits: SplitLimits): Promise<boolean> {
  const { params, ctx, network } = input;
  if (!settings.split || !Array.isArray(params)) return false;
  const filter = params[0] as Record<string, unknown> | undefined;
  if (filter === undefined || (filter.blockHash !== undefined && filter.blockHash !== null)) return false;

  let headNumber: Promise<number> | undefined;
  const head = (): Promise<number> => (headNumber ??= lookupHead(network, 'eth_blockNumber', []).then((n) => quantityOf(n) ?? Number.NaN));
  const from = await blockNumberOf(filter.fromBlock, network, head);
  const to = await blockNumberOf(filter.toBlock, network, head);
  if (from === undefined || to === undefined || Number.isNaN(from) || Number.isNaN(to) || from > to) return false;

  const learned = network.state.get(LEARNED_RANGE) as number | undefined;
  const width = Math.min(settings.maxBlockRange ?? Number.MAX_SAFE_INTEGER, learned ?? Number.MAX_SAFE_INTEGER);
  // A range of one part is one node query, as unsplit: only calls that fan out hold a slot.
  const release = to - from + 1 > width ? takeSplitSlot(network, keyOf(ctx).id, settings.callsPerKey) : undefined;
  const fresh = parts({ from, to }, width);
  const halves: Range[] = []; // halves of a part a node refused, asked before any fresh part
  const found = new Map<number, readonly unknown[]>(); // logs by the first block of their part
  let count = 0;
  let ended: unknown;

  const next = (): Range | undefined => halves.pop() ?? fresh.next().value ?? undefined;
  const ask = async (range: Range): Promise<void> => {
    try {
      const logs = await network.rpc('eth_getLogs', [{ ...filter, fromBlock: hex(range.from), toBlock: hex(range.to) }]);
      if (!Array.isArray(logs)) throw new GatewayError(Errors.UPSTREAM_BAD_RESPONSE, { message: 'a node answered eth_getLogs with something else than a list of logs' });
      count += logs.length;
      if (count > limits.maxResults) throw new GatewayError(Errors.LIMIT_EXCEEDED, { message: `query returned more than ${limits.maxResults} results` });
      found.set(range.from, logs);
    } catch (error) {
      if (!(error instanceof NodeAnswerError)) throw error;
      if (!isRangeTooWide(error.error) || range.from === range.to) throw new NodeAnswer(error);
      const middle = range.from + Math.floor((range.to - range.from) / 2);
      const half = middle - range.from + 1;
      if (half < (network.state.get(LEARNED_RANGE) as number | undefined ?? Number.MAX_SAFE_INTEGER)) network.state.set(LEARNED_RANGE, half);
      halves.push({ from: middle + 1, to: range.to }, { from: range.from, to: middle });
    }
  };
  const worker = async (): Promise<void> => {
    for (let range = next(); range !== undefined && ended === undefined && !ctx.cancelSignal.aborted; range = next()) {
      try {
        await ask(range);
      } catch (error) {
        ended ??= error;
      }
    }
  };

  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(() => {
      ended ??= new GatewayError(Errors.LIMIT_EXCEEDED, { message: 'query timeout exceeded' });
      resolve();
    }, limits.timeoutMs);
  });
  // Workers stop taking parts once the call ended; a halved part's second half is picked up by whichever is free.
  const workers = async (): Promise<void> => {
    let running: Array<Promise<void>> = [];
    do {
      running = Array.from({ length: settings.concurrency }, worker);
      await Promise.all(running);
    } while (ended === undefined && !ctx.cancelSignal.aborted && halves.length > 0);
  };
  // The slot is held until the last node query ended, not only until the answer: the time limit answers
  // while parts still run at the nodes.
  const running = workers().finally(() => release?.());
  try {
    await Promise.race([running, deadline]);
  } finally {
    clearTimeout(timer);
  }
  if (ended instanceof NodeAnswer) {
    answerWithNodeError(ctx, ended.error.error);
    return true;
  }
  if (ended instanceof GatewayError && ended.entry === Errors.LIMIT_EXCEEDED) {
    answerWithChargedError(ctx, ended);
    return true;
  }
  if (ended !== undefined) throw ended;
  if (ctx.cancelSignal.aborted) throw new GatewayError(Errors.INTERNAL_ERROR, { message: 'the call was cancelled' });
  const merged = [...found.keys()].sort((a, b) => a - b).flatMap((start) => found.get(start)!);
  answerWith(ctx, merged);
  return true;
}
