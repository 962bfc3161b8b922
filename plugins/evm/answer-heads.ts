/**
 * Which evm answers show the client a chain head, so the gateway can keep what clients see from going
 * backwards across nodes and instances (see `MethodDefinition.answerHead` and docs/upstreams.md).
 *
 * @module
 */
import type { AnswerHead, AnswerView, MethodDefinition } from '../../core/family-api.js';
import { blockNumberHead } from './answers.js';

/** The head scope of each block tag whose block is a head: `latest` is the network's head (scope `''`). */
const TAG_SCOPES: Readonly<Record<string, string>> = Object.freeze({ latest: '', safe: 'safe', finalized: 'finalized' });

/** `eth_blockNumber`: its result is the head. */
function blockNumberAnswer(answer: AnswerView): AnswerHead | undefined {
  const head = blockNumberHead(answer.member('result'));
  return head === undefined ? undefined : { head };
}

/**
 * `eth_getBlockByNumber` for a head tag (`latest`, `safe`, `finalized`): the block's number is that
 * head. A block asked for by number, or `pending` (a block not yet made), shows none. Only the block's
 * `number` is read from the answer's bytes: its transactions are skipped, not parsed.
 */
function blockByTagAnswer(answer: AnswerView, params: unknown): AnswerHead | undefined {
  const tag = Array.isArray(params) ? params[0] : undefined;
  if (typeof tag !== 'string' || !Object.hasOwn(TAG_SCOPES, tag)) return undefined;
  const head = blockNumberHead(answer.member('result', 'number'));
  return head === undefined ? undefined : { head, scope: TAG_SCOPES[tag]! };
}

/** The `answerHead` of each evm method whose answer shows a head, by method name. */
export const EVM_ANSWER_HEADS: Readonly<Record<string, Pick<MethodDefinition, 'answerHead'>>> = Object.freeze({
  eth_blockNumber: { answerHead: blockNumberAnswer },
  eth_getBlockByNumber: { answerHead: blockByTagAnswer },
});
