/**
 * The slots Solana answers show a client, so that none goes backwards: a `getSlot` answer, and the
 * `context.slot` of every answer that carries a context. Each commitment level has its own floor (a
 * `finalized` slot is rightly behind a `processed` one); `processed` is the network's own head, the
 * scope the health probes report in, so what clients see and what routing knows are the same slots.
 *
 * @module
 */
import type { AnswerHead, AnswerView, MethodDefinition } from '../../core/family-api.js';
import { commitmentOf } from './commitment.js';

/** A slot as JSON gives it: a non-negative safe integer. */
export function slotHead(result: unknown): number | undefined {
  return typeof result === 'number' && Number.isSafeInteger(result) && result >= 0 ? result : undefined;
}

/** The head scope of a commitment level: `''` (the network's head) for `processed`, `slot:<level>` for the others. */
export function slotScope(commitment: string): string {
  return commitment === 'processed' ? '' : `slot:${commitment}`;
}

/** The head a `getSlot` answer shows, in the scope of the commitment it asked for. */
function slotAnswer(answer: AnswerView, params: unknown): AnswerHead | undefined {
  const head = slotHead(answer.member('result'));
  return head === undefined ? undefined : { head, scope: slotScope(commitmentOf(params)) };
}

/** The head an answer's `context.slot` shows, in the scope of the commitment the call asked for (read alone from the bytes: the accounts are skipped). */
function contextSlot(answer: AnswerView, params: unknown): AnswerHead | undefined {
  const head = slotHead(answer.member('result', 'context', 'slot'));
  return head === undefined ? undefined : { head, scope: slotScope(commitmentOf(params)) };
}

/** The head a `processed`-bank answer shows whatever the call's commitment (`getSignatureStatuses` reads the processed bank). */
function processedContextSlot(answer: AnswerView): AnswerHead | undefined {
  const head = slotHead(answer.member('result', 'context', 'slot'));
  return head === undefined ? undefined : { head, scope: '' };
}

/** The methods whose answers carry `{context: {slot}, value}`, read at the call's commitment. */
const WITH_CONTEXT = [
  'getAccountInfo',
  'getBalance',
  'getMultipleAccounts',
  'getProgramAccounts',
  'getLatestBlockhash',
  'isBlockhashValid',
  'getFeeForMessage',
  'getTokenAccountBalance',
  'getTokenSupply',
  'getTokenAccountsByOwner',
  'getTokenAccountsByDelegate',
  'getTokenLargestAccounts',
  'getLargestAccounts',
  'getSupply',
  'simulateTransaction',
] as const;

/** The `answerHead` hook of each method whose answers show a slot. */
export const SOLANA_ANSWER_HEADS: Readonly<Record<string, Pick<MethodDefinition, 'answerHead'>>> = {
  ...Object.fromEntries(WITH_CONTEXT.map((name) => [name, { answerHead: contextSlot }])),
  getSlot: { answerHead: slotAnswer },
  getSignatureStatuses: { answerHead: processedContextSlot },
};

/**
 * The `minHead` hook of every method that takes `minContextSlot` (in any config object): a node known
 * to be below that slot (its processed slot, the network's head) is not asked.
 */
export function minContextSlot(params: unknown): number | undefined {
  if (!Array.isArray(params)) return undefined;
  for (const param of params) {
    const slot = (param as { minContextSlot?: unknown } | null)?.minContextSlot;
    if (typeof param === 'object' && typeof slot === 'number' && Number.isSafeInteger(slot)) return slot;
  }
  return undefined;
}
