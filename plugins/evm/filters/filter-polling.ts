/**
 * What a poll of a gateway-served filter delivers: the changes since its cursor, read from the network's
 * nodes, whichever of them answers (a filter is not tied to a node, so failover loses nothing).
 *
 * @module
 */
import type { NetworkRuntime } from '../../../core/family-api.js';
import { headUnknown, lookupHead } from '../head-lookup.js';

/** The criteria of a log filter, as `eth_newFilter` took them. */
export interface LogCriteria {
  /** First block (a number or a tag), as the client gave it. */
  readonly fromBlock?: unknown;
  /** Last block (a number or a tag), as the client gave it. */
  readonly toBlock?: unknown;
  /** One address or several. */
  readonly address?: unknown;
  /** Topic positions. */
  readonly topics?: unknown;
}

/** A log filter: its criteria. */
export interface LogFilterSpec {
  /** Always `logs`. */
  readonly kind: 'logs';
  /** What its logs match. */
  readonly criteria: LogCriteria;
}

/** A block filter: the hashes of new blocks. */
export interface BlockFilterSpec {
  /** Always `blocks`. */
  readonly kind: 'blocks';
}

/** A pending-transaction filter: the hashes newly seen in the pending block. */
export interface PendingFilterSpec {
  /** Always `pending`. */
  readonly kind: 'pending';
}

/** A filter's kind and criteria, as stored (JSON) by the filter store. */
export type FilterSpec = LogFilterSpec | BlockFilterSpec | PendingFilterSpec;

/** What a poll delivers, and where the filter's cursor moves once it is delivered. */
export interface FilterChanges {
  /** The logs, block hashes or transaction hashes. */
  readonly changes: unknown[];
  /** The new cursor. */
  readonly cursor: string;
}

/** Most blocks one poll of a block filter covers: a filter left long unpolled catches up over several polls. */
export const MAX_BLOCKS_PER_POLL = 1_000;

const hex = (n: number): string => `0x${n.toString(16)}`;

/** A hex quantity as a number; undefined for anything else (a tag). */
export function quantityOf(value: unknown): number | undefined {
  return typeof value === 'string' && /^0[xX][0-9a-fA-F]{1,13}$/.test(value) ? Number.parseInt(value.slice(2), 16) : undefined;
}

/** The network's head block number; `HEAD_UNKNOWN` when the node refuses the lookup or answers no number. */
export async function headOf(network: NetworkRuntime): Promise<number> {
  const answer = await lookupHead(network, 'eth_blockNumber', []);
  const head = quantityOf(answer);
  if (head === undefined) throw headUnknown(network, 'eth_blockNumber did not answer a block number');
  return head;
}

/** The cursor a new filter starts from: the head (a filter delivers what comes after its creation, as a node's does). */
export async function initialCursor(spec: FilterSpec, network: NetworkRuntime): Promise<string> {
  if (spec.kind === 'pending') return '[]';
  return hex(await headOf(network));
}

/** The changes of a filter after `cursor`, and the cursor once they are delivered. */
export async function changesAfter(spec: FilterSpec, cursor: string, network: NetworkRuntime): Promise<FilterChanges> {
  if (spec.kind === 'pending') {
    // The transactions of the node's pending block not delivered at the last poll.
    const block = (await network.rpc('eth_getBlockByNumber', ['pending', false])) as { transactions?: unknown } | null;
    const current = Array.isArray(block?.transactions) ? (block.transactions as string[]) : [];
    const delivered = new Set(JSON.parse(cursor) as string[]);
    return { changes: current.filter((hash) => !delivered.has(hash)), cursor: JSON.stringify(current) };
  }
  const last = quantityOf(cursor) ?? 0;
  const head = await headOf(network);
  if (head <= last) return { changes: [], cursor };
  if (spec.kind === 'blocks') {
    const to = Math.min(head, last + MAX_BLOCKS_PER_POLL);
    const hashes: unknown[] = [];
    for (let from = last + 1; from <= to; from += 8) {
      const numbers = Array.from({ length: Math.min(8, to - from + 1) }, (_, i) => from + i);
      const blocks = await Promise.all(numbers.map((n) => network.rpc('eth_getBlockByNumber', [hex(n), false]) as Promise<{ hash?: unknown } | null>));
      hashes.push(...blocks.map((b) => b?.hash ?? null));
    }
    return { changes: hashes, cursor: hex(to) };
  }
  // Logs of the blocks after the cursor, within the filter's own range when it gave numbers.
  const from = Math.max(last + 1, quantityOf(spec.criteria.fromBlock) ?? 0);
  const to = Math.min(head, quantityOf(spec.criteria.toBlock) ?? head);
  if (from > to) return { changes: [], cursor: hex(head) };
  const logs = await network.rpc('eth_getLogs', [{ ...spec.criteria, fromBlock: hex(from), toBlock: hex(to) }]);
  return { changes: Array.isArray(logs) ? logs : [], cursor: hex(head) };
}
