import bs58 from 'bs58';
import { WebSocket } from 'ws';
import type { SolanaScenario } from './solana-rpc-scenario.js';

/** A step taken on the scenario's node while a subscription is open. */
export type PubsubAction =
  | { readonly kind: 'airdrop'; readonly to: string; readonly lamports: number }
  | { readonly kind: 'send'; readonly transaction: string }
  | { readonly kind: 'advance'; readonly slots: number };

/** One recorded subscription: its subscribe params and what is done while it is open. */
export interface PubsubPlan {
  readonly comment: string;
  readonly params: unknown[];
  readonly actions: readonly PubsubAction[];
}

const SYSTEM_PROGRAM = '11111111111111111111111111111111';

/** The recorded plan of each of the nine subscriptions. */
export function solanaPubsubPlans(s: SolanaScenario): Readonly<Record<string, PubsubPlan>> {
  const recipient = s.recipient.toBase58();
  const unsentSignature = bs58.encode(Buffer.from(s.unsent, 'base64').subarray(1, 65));
  const airdrop: PubsubAction = { kind: 'airdrop', to: recipient, lamports: 1_000_000_000 };
  const send: PubsubAction = { kind: 'send', transaction: s.unsent };
  const advance = (slots: number): PubsubAction => ({ kind: 'advance', slots });
  return {
    accountSubscribe: { comment: 'the recipient at confirmed, base64: an airdrop, then a slot', params: [recipient, { commitment: 'confirmed', encoding: 'base64' }], actions: [airdrop, advance(1)] },
    blockSubscribe: { comment: 'every block at confirmed, signatures only', params: ['all', { commitment: 'confirmed', transactionDetails: 'signatures', maxSupportedTransactionVersion: 0 }], actions: [send, advance(2)] },
    logsSubscribe: { comment: 'the recipient\'s transactions at processed', params: [{ mentions: [recipient] }, { commitment: 'processed' }], actions: [send] },
    programSubscribe: { comment: 'system accounts without data at processed', params: [SYSTEM_PROGRAM, { commitment: 'processed', encoding: 'base64', filters: [{ dataSize: 0 }] }], actions: [airdrop] },
    rootSubscribe: { comment: 'two slots', params: [], actions: [advance(2)] },
    signatureSubscribe: { comment: 'a transfer at confirmed, received first; the subscription ends once it fired', params: [unsentSignature, { commitment: 'confirmed', enableReceivedNotification: true }], actions: [send, advance(1)] },
    slotSubscribe: { comment: 'two slots', params: [], actions: [advance(2)] },
    slotsUpdatesSubscribe: { comment: 'one slot', params: [], actions: [advance(1)] },
    voteSubscribe: { comment: 'one slot', params: [], actions: [advance(1)] },
  };
}

/** The unsubscribe method of a subscribe method. */
const unsubscribeOf = (method: string): string => method.replace(/Subscribe$/, 'Unsubscribe');

/**
 * Runs `plan` of `method` over a WebSocket to `wsUrl` while taking its actions on the scenario's node,
 * and returns the transcript: the subscribe call (`>>`) and its answer (`<<`), the actions (`// do:`),
 * the unsubscribe call, then everything received after the subscribe answer, in order. The
 * unsubscribe's answer comes after every notification the actions caused.
 */
export async function recordSubscription(scenario: SolanaScenario, wsUrl: string, method: string, plan: PubsubPlan): Promise<string[]> {
  const socket = new WebSocket(wsUrl);
  const lines: string[] = [];
  const received: string[] = [];
  const waiting: Array<{ id: number; resolve: (answer: { result?: unknown }) => void }> = [];
  socket.on('message', (data) => {
    const text = String(data);
    received.push(`<< ${text}`);
    const answer = JSON.parse(text) as { id?: number; result?: unknown };
    const at = waiting.findIndex((w) => w.id === answer.id);
    if (at >= 0) waiting.splice(at, 1)[0]!.resolve(answer);
  });
  await new Promise<void>((resolve, reject) => { socket.once('open', () => resolve()); socket.once('error', reject); });
  const call = (id: number, name: string, params: unknown[]): Promise<{ result?: unknown }> => {
    const text = JSON.stringify({ jsonrpc: '2.0', id, method: name, params });
    lines.push(`>> ${text}`);
    return new Promise((resolve) => { waiting.push({ id, resolve }); socket.send(text); });
  };
  try {
    const { result: subscription } = await call(1, method, plan.params);
    lines.push(received.shift()!);
    for (const action of plan.actions) {
      if (action.kind === 'advance') {
        lines.push(`// do: advance ${action.slots}`);
        scenario.advance(action.slots);
        continue;
      }
      const [name, params] = action.kind === 'airdrop' ? ['requestAirdrop', [action.to, action.lamports]] : ['sendTransaction', [action.transaction, { encoding: 'base64' }]];
      lines.push(`// do: ${name} ${JSON.stringify(params)}`);
      await scenario.instance.server.answer({ jsonrpc: '2.0', id: 1, method: name, params });
    }
    await call(2, unsubscribeOf(method), [subscription]);
  } finally {
    socket.close();
  }
  return [...lines, ...received];
}
