/**
 * Supply, inflation, fees and performance: `getSupply`, `getInflationGovernor`, `getInflationRate`,
 * `getInflationReward`, `getLatestBlockhash`, `isBlockhashValid`, `getFeeForMessage`,
 * `getRecentPrioritizationFees`, `getRecentPerformanceSamples`.
 *
 * @module
 */
import { transactionFee } from '../ledger/fees.js';
import { epochOf, firstSlotOfEpoch } from '../ledger/epochs.js';
import { MAX_PROCESSING_AGE } from '../ledger/ledger.js';
import { decodeWireTransaction, isWritable } from '../ledger/wire-transaction.js';
import { rustF64 } from '../json-text.js';
import { RpcError } from '../rpc-error.js';
import { expectNoParams, positional, readConfig, readString, readU64 } from '../serde-params.js';
import { contextSlot, readBool, readStringList, verifyPubkey, withContext, type MethodContext } from './common.js';
import { OWNERS } from './accounts.js';

/** agave's default inflation: 8% tapering 15% a year to 1.5%, 5% to the foundation for 7 years. */
const INFLATION = { initial: 0.08, terminal: 0.015, taper: 0.15, foundation: 0.05, foundationTerm: 7 };
/** Slots in a year at 400 ms a slot, as agave's genesis computes it. */
const SLOTS_PER_YEAR = 78_892_314.984;
/** agave's `MAX_RECENT_PRIORITIZATION_FEE_ACCOUNTS`. */
export const MAX_PRIORITIZATION_FEE_ACCOUNTS = 128;
/** agave's `MAX_RECENT_PERFORMANCE_SAMPLES`. */
export const MAX_PERFORMANCE_SAMPLES = 720;
/** Slots in one performance sample (about 60 s at 400 ms a slot, agave's sample period). */
const SAMPLE_SLOTS = 150n;

function getSupply(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const config = readConfig(rawConfig, 'RpcSupplyConfig');
  readBool(config?.excludeNonCirculatingAccountsList);
  const slot = contextSlot(node, config);
  let total = 0n;
  for (const owner of OWNERS) for (const { account } of node.programAccounts(owner)) total += account.lamports;
  // A devnet has no locked or foundation accounts: everything circulates.
  return withContext(node, slot, { total, circulating: total, nonCirculating: 0n, nonCirculatingAccounts: [] });
}

function getInflationGovernor(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  const { initial, terminal, taper, foundation, foundationTerm } = INFLATION;
  return { initial: rustF64(initial), terminal: rustF64(terminal), taper: rustF64(taper), foundation: rustF64(foundation), foundationTerm: rustF64(foundationTerm) };
}

function getInflationRate(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  const schedule = node.svm.getEpochSchedule();
  const { epoch } = epochOf(schedule, node.slot('finalized'));
  const year = Number(firstSlotOfEpoch(schedule, epoch)) / SLOTS_PER_YEAR;
  const total = Math.max(INFLATION.initial * (1 - INFLATION.taper) ** year, INFLATION.terminal);
  const foundation = year < INFLATION.foundationTerm ? total * INFLATION.foundation : 0;
  return { total: rustF64(total), validator: rustF64(total - foundation), foundation: rustF64(foundation), epoch };
}

function getInflationReward(params: unknown, { node }: MethodContext): unknown {
  const [addresses, rawConfig] = positional(params, 1, 2);
  const list = readStringList(addresses).map(verifyPubkey);
  const config = readConfig(rawConfig, 'RpcEpochConfig');
  const epoch = readU64(config?.epoch);
  const current = epochOf(node.svm.getEpochSchedule(), contextSlot(node, config)).epoch;
  if (epoch !== undefined && BigInt(epoch) >= current) throw RpcError.invalidParams(`Invalid param: epoch ${epoch}. Only past epochs are supported.`);
  // No stake or vote account of a client earns rewards on a devnet: nothing to report for any address.
  return list.map(() => null);
}

function getLatestBlockhash(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  return withContext(node, slot, { blockhash: node.ledger.blockhash(slot), lastValidBlockHeight: node.ledger.blockHeight(slot) + BigInt(MAX_PROCESSING_AGE) });
}

function isBlockhashValid(params: unknown, { node }: MethodContext): unknown {
  const [hash, rawConfig] = positional(params, 1, 2);
  const text = readString(hash);
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  if (text.length > 44 || !/^[1-9A-HJ-NP-Za-km-z]+$/.test(text)) throw RpcError.invalidParams('Invalid param: Invalid');
  const at = node.ledger.blockhashSlot(text);
  return withContext(node, slot, at !== undefined && at <= slot && slot - at <= BigInt(MAX_PROCESSING_AGE));
}

function getFeeForMessage(params: unknown, { node }: MethodContext): unknown {
  const [message, rawConfig] = positional(params, 1, 2);
  const text = readString(message);
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  const bytes = Buffer.from(text, 'base64');
  if (bytes.toString('base64') !== text) throw RpcError.invalidParams(`invalid base64 encoding: ${JSON.stringify(text.slice(0, 16))}`);
  let fee: bigint | null;
  try {
    // The message alone: give it an empty signature list to read it with the transaction decoder.
    const tx = decodeWireTransaction(Buffer.concat([Buffer.from([1]), Buffer.alloc(64), bytes]));
    const at = node.ledger.blockhashSlot(tx.recentBlockhash);
    fee = at !== undefined && slot - at <= BigInt(MAX_PROCESSING_AGE) ? transactionFee(tx) : null;
  } catch {
    throw RpcError.invalidParams('invalid transaction message');
  }
  return withContext(node, slot, fee);
}

function getRecentPrioritizationFees(params: unknown, { node }: MethodContext): unknown {
  const [addresses] = positional(params, 0, 1);
  const list = addresses === undefined || addresses === null ? [] : readStringList(addresses).map(verifyPubkey);
  if (list.length > MAX_PRIORITIZATION_FEE_ACCOUNTS) throw RpcError.invalidParams(`Too many inputs provided; max ${MAX_PRIORITIZATION_FEE_ACCOUNTS}`);
  const last = node.slot('confirmed');
  const first = last - BigInt(MAX_PROCESSING_AGE) + 1n > node.ledger.firstSlot ? last - BigInt(MAX_PROCESSING_AGE) + 1n : node.ledger.firstSlot;
  const out: Array<{ slot: bigint; prioritizationFee: bigint }> = [];
  for (let slot = first; slot <= last; slot++) {
    // The lowest price that landed in the block, among the transactions writing to one of `addresses` when given.
    const prices = node.ledger.transactions(slot)
      .filter((r) => list.length === 0 || r.tx.accountKeys.some((k, i) => list.includes(k) && isWritable(r.tx, i)))
      .map((r) => r.computeUnitPrice);
    out.push({ slot, prioritizationFee: prices.length === 0 ? 0n : prices.reduce((a, b) => (a < b ? a : b)) });
  }
  return out;
}

function getRecentPerformanceSamples(params: unknown, { node }: MethodContext): unknown {
  const [rawLimit] = positional(params, 0, 1);
  const limit = readU64(rawLimit, 'usize') ?? MAX_PERFORMANCE_SAMPLES;
  if (limit > MAX_PERFORMANCE_SAMPLES) throw RpcError.invalidParams(`Invalid limit; max ${MAX_PERFORMANCE_SAMPLES}`);
  const head = node.slot('processed');
  const out: unknown[] = [];
  // A sample closes every SAMPLE_SLOTS slots after the first block; newest first.
  for (let end = node.ledger.firstSlot + ((head - node.ledger.firstSlot) / SAMPLE_SLOTS) * SAMPLE_SLOTS; end > node.ledger.firstSlot && out.length < limit; end -= SAMPLE_SLOTS) {
    let count = 0n;
    for (let s = end - SAMPLE_SLOTS + 1n; s <= end; s++) count += BigInt(node.ledger.transactions(s).length);
    out.push({ slot: end, numTransactions: count, numNonVoteTransactions: count, numSlots: SAMPLE_SLOTS, samplePeriodSecs: 60 });
  }
  return out;
}

/** The economics and fee methods by name. */
export const ECONOMICS_METHODS = {
  getSupply, getInflationGovernor, getInflationRate, getInflationReward, getLatestBlockhash, isBlockhashValid, getFeeForMessage,
  getRecentPrioritizationFees, getRecentPerformanceSamples,
};
