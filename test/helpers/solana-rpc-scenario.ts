import { createHash } from 'node:crypto';
import { Keypair, PublicKey, SystemProgram, Transaction, TransactionMessage, VersionedTransaction } from '@solana/web3.js';
import { startLiteSvmInstance, type LiteSvmInstance } from '@tollgate/devnet';

/**
 * The recorded Solana RPC scenario: a devnet Solana node at a fixed time and slot, with an airdrop, a
 * legacy and a v0 transfer in its ledger, all finalized. Every node it starts is the same, byte for
 * byte, so the answers recorded in test/fixtures/solana-rpc/ can be compared with a fresh one's.
 */
export interface SolanaScenario {
  readonly instance: LiteSvmInstance;
  /** The paying key pair (funded by the airdrop). */
  readonly payer: Keypair;
  /** The transfers' recipient. */
  readonly recipient: PublicKey;
  /** Signatures: the airdrop, the legacy transfer, the v0 transfer. */
  readonly signatures: { readonly airdrop: string; readonly transfer: string; readonly v0: string };
  /** The slot of the legacy transfer's block. */
  readonly transferSlot: number;
  /** A signed, unsent transfer of 0.01 SOL from the payer (base64), for sendTransaction and simulateTransaction. */
  readonly unsent: string;
  /** A signed, unsent transfer the payer cannot afford (base64). */
  readonly unaffordable: string;
  /** The head slot's blockhash. */
  readonly blockhash: string;
  /** Moves the head `slots` forward, and the clock with it (400 ms a slot). */
  advance(slots: number): void;
  stop(): Promise<void>;
}

/** 2026-01-01T00:00:00Z: the scenario's genesis time. */
export const SCENARIO_GENESIS_MS = Date.UTC(2026, 0, 1);

const keyOf = (label: string): Keypair => Keypair.fromSeed(createHash('sha256').update(`tollgate-solana-recording:${label}`).digest());

function legacyTransfer(from: Keypair, to: PublicKey, lamports: number, blockhash: string): Buffer {
  const tx = new Transaction({ feePayer: from.publicKey, recentBlockhash: blockhash }).add(SystemProgram.transfer({ fromPubkey: from.publicKey, toPubkey: to, lamports }));
  tx.sign(from);
  return tx.serialize();
}

/** Starts the scenario's node (slot clock stopped: slots move only with `advance`). */
export async function startSolanaScenario(): Promise<SolanaScenario> {
  let ms = SCENARIO_GENESIS_MS;
  const instance = await startLiteSvmInstance('litesvm#recording', { slotMs: 0, now: () => ms });
  const { node } = instance;
  const advance = (slots: number): void => { ms += 400 * slots; node.advance(slots); };
  const call = async (method: string, params: unknown[]): Promise<unknown> => {
    const answer = JSON.parse((await instance.server.answer({ jsonrpc: '2.0', id: 1, method, params }))!) as { result?: unknown; error?: unknown };
    if (answer.error !== undefined) throw new Error(`${method}: ${JSON.stringify(answer.error)}`);
    return answer.result;
  };
  const payer = keyOf('payer');
  const recipient = keyOf('recipient').publicKey;
  advance(2);
  const airdrop = await call('requestAirdrop', [payer.publicKey.toBase58(), 10_000_000_000]) as string;
  advance(1);
  const transferSlot = Number(node.slot('processed'));
  const transfer = await call('sendTransaction', [legacyTransfer(payer, recipient, 100_000_000, node.latestBlockhash('processed').blockhash).toString('base64'), { encoding: 'base64' }]) as string;
  advance(1);
  const v0 = new VersionedTransaction(new TransactionMessage({
    payerKey: payer.publicKey,
    recentBlockhash: node.latestBlockhash('processed').blockhash,
    instructions: [SystemProgram.transfer({ fromPubkey: payer.publicKey, toPubkey: recipient, lamports: 200_000_000 })],
  }).compileToV0Message());
  v0.sign([payer]);
  const v0Signature = await call('sendTransaction', [Buffer.from(v0.serialize()).toString('base64'), { encoding: 'base64' }]) as string;
  // Far enough for a snapshot slot (100) to be finalized and a performance sample (150 slots) to close.
  advance(160);
  const blockhash = node.latestBlockhash('processed').blockhash;
  return {
    instance,
    payer,
    recipient,
    signatures: { airdrop, transfer, v0: v0Signature },
    transferSlot,
    unsent: legacyTransfer(payer, recipient, 10_000_000, blockhash).toString('base64'),
    unaffordable: legacyTransfer(keyOf('pauper'), recipient, 10_000_000, blockhash).toString('base64'),
    blockhash,
    advance,
    stop: () => instance.stop(),
  };
}
