/**
 * Transaction fees as a cluster computes them: 5,000 lamports a signature plus the priority fee the
 * compute-budget instructions ask (`ceil(price × limit / 10^6)`).
 *
 * @module
 */
import type { WireTransaction } from './wire-transaction.js';

/** Lamports per signature on every public cluster. */
export const LAMPORTS_PER_SIGNATURE = 5000n;
/** The compute-budget program. */
export const COMPUTE_BUDGET_PROGRAM_ID = 'ComputeBudget111111111111111111111111111111';
const DEFAULT_UNITS_PER_INSTRUCTION = 200_000n;
const MAX_UNITS = 1_400_000n;

/** What the compute-budget instructions of `tx` ask: unit price (micro-lamports) and unit limit. */
export function computeBudget(tx: WireTransaction): { price: bigint; limit: bigint } {
  let price = 0n;
  let limit: bigint | undefined;
  let others = 0n;
  for (const ix of tx.instructions) {
    if (tx.accountKeys[ix.programIdIndex] !== COMPUTE_BUDGET_PROGRAM_ID) { others += 1n; continue; }
    const data = Buffer.from(ix.data);
    if (data[0] === 2 && data.length >= 5) limit = BigInt(data.readUInt32LE(1));
    if (data[0] === 3 && data.length >= 9) price = data.readBigUInt64LE(1);
  }
  const fallback = others * DEFAULT_UNITS_PER_INSTRUCTION;
  return { price, limit: limit ?? (fallback > MAX_UNITS ? MAX_UNITS : fallback) };
}

/** The fee of `tx`, in lamports. */
export function transactionFee(tx: WireTransaction): bigint {
  const { price, limit } = computeBudget(tx);
  const signatures = BigInt(tx.header.numRequiredSignatures);
  return signatures * LAMPORTS_PER_SIGNATURE + (price * limit + 999_999n) / 1_000_000n;
}
