/**
 * The single validator and its cluster: `getClusterNodes`, `getHealth`, `getVersion`, `getIdentity`,
 * `getGenesisHash`, `getEpochInfo`, `getEpochSchedule`, `getLeaderSchedule`, `getVoteAccounts`,
 * `getStakeMinimumDelegation`.
 *
 * @module
 */
import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { epochOf, firstSlotOfEpoch, slotsInEpoch } from '../ledger/epochs.js';
import type { LiteSvmNode } from '../litesvm-node.js';
import { expectNoParams, positional, readConfig, readString, readU64 } from '../serde-params.js';
import { contextSlot, readBool, verifyPubkey, withContext, type MethodContext } from './common.js';

/** The stake delegated to the one validator (what its vote account reports), in lamports: 500,000 SOL. */
export const VALIDATOR_STAKE = 500_000n * 1_000_000_000n;

/** The validator's vote account: derived from its identity, as a fixed address. */
export function voteAccountOf(node: LiteSvmNode): string {
  return bs58.encode(createHash('sha256').update(`tollgate-litesvm-vote:${node.identity}`).digest());
}

function getClusterNodes(params: unknown, { node, rpcAddress, pubsubAddress }: MethodContext): unknown {
  expectNoParams(params);
  // One node: this one. Only its RPC (and pubsub) services exist; the other addresses are the ones a
  // solana-test-validator reports on loopback (gossip 1024...), UDP TPU ports null as on current agave.
  const at = (port: number): string => `127.0.0.1:${port}`;
  return [{
    pubkey: node.identity,
    gossip: at(1024),
    tvu: at(1025),
    tpu: null,
    tpuQuic: at(1033),
    tpuForwards: null,
    tpuForwardsQuic: at(1034),
    tpuVote: at(1031),
    serveRepair: at(1032),
    rpc: rpcAddress,
    pubsub: pubsubAddress ?? null,
    version: node.version,
    featureSet: node.featureSet,
    shredVersion: node.shredVersion,
    clientId: 'Agave',
  }];
}

function getHealth(params: unknown): unknown {
  expectNoParams(params);
  return 'ok';
}

function getVersion(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  return { 'solana-core': node.version, 'feature-set': node.featureSet };
}

function getIdentity(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  return { identity: node.identity };
}

function getGenesisHash(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  return node.ledger.genesisHash;
}

function getEpochInfo(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const config = readConfig(rawConfig, 'RpcContextConfig');
  const slot = contextSlot(node, config);
  const schedule = node.svm.getEpochSchedule();
  const { epoch, slotIndex } = epochOf(schedule, slot);
  const transactionCount = node.ledger.transactionCountAt(slot, node.slot('processed'));
  return { absoluteSlot: slot, blockHeight: node.ledger.blockHeight(slot), epoch, slotIndex, slotsInEpoch: slotsInEpoch(schedule, epoch), transactionCount };
}

function getEpochSchedule(params: unknown, { node }: MethodContext): unknown {
  expectNoParams(params);
  const s = node.svm.getEpochSchedule();
  return { slotsPerEpoch: s.slotsPerEpoch, leaderScheduleSlotOffset: s.leaderScheduleSlotOffset, warmup: s.warmup, firstNormalEpoch: s.firstNormalEpoch, firstNormalSlot: s.firstNormalSlot };
}

function getLeaderSchedule(params: unknown, { node }: MethodContext): unknown {
  const [first, second] = positional(params, 0, 2);
  // agave: `getLeaderSchedule(slot?, config?)`, or the config alone in the first place.
  const configFirst = first !== null && typeof first === 'object';
  const slotParam = configFirst ? undefined : readU64(first);
  const config = readConfig(configFirst ? first : second, 'RpcLeaderScheduleConfig');
  const identity = config?.identity === undefined || config.identity === null ? undefined : verifyPubkey(readString(config.identity));
  const current = contextSlot(node, config);
  const schedule = node.svm.getEpochSchedule();
  const { epoch } = epochOf(schedule, slotParam === undefined ? current : BigInt(slotParam));
  // The schedule is known for the current epoch and the next one (the leader-schedule offset is one epoch).
  if (epoch > epochOf(schedule, current).epoch + 1n) return null;
  if (identity !== undefined && identity !== node.identity) return {};
  const length = Number(slotsInEpoch(schedule, epoch));
  return { [node.identity]: Array.from({ length }, (_, i) => i) };
}

function getVoteAccounts(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const config = readConfig(rawConfig, 'RpcGetVoteAccountsConfig');
  const votePubkey = config?.votePubkey === undefined || config.votePubkey === null ? undefined : verifyPubkey(readString(config.votePubkey));
  readBool(config?.keepUnstakedDelinquents);
  readU64(config?.delinquentSlotDistance);
  const slot = contextSlot(node, config);
  const vote = voteAccountOf(node);
  const { epoch } = epochOf(node.svm.getEpochSchedule(), slot);
  // One vote a slot, one credit a vote: the credits of this epoch are the slots voted in it.
  const credits = slot - node.ledger.firstSlot;
  const startOfEpoch = firstSlotOfEpoch(node.svm.getEpochSchedule(), epoch);
  const previous = startOfEpoch > node.ledger.firstSlot ? startOfEpoch - node.ledger.firstSlot : 0n;
  const current = votePubkey === undefined || votePubkey === vote ? [{
    votePubkey: vote,
    nodePubkey: node.identity,
    activatedStake: VALIDATOR_STAKE,
    epochVoteAccount: true,
    epochCredits: [[epoch, credits, previous]],
    commission: 0,
    lastVote: node.slot('processed'),
    rootSlot: node.slot('finalized'),
  }] : [];
  return { current, delinquent: [] };
}

function getStakeMinimumDelegation(params: unknown, { node }: MethodContext): unknown {
  const [rawConfig] = positional(params, 0, 1);
  const slot = contextSlot(node, readConfig(rawConfig, 'RpcContextConfig'));
  // LiteSVM runs every feature, `stake_raise_minimum_delegation_to_1_sol` among them: one SOL.
  return withContext(node, slot, 1_000_000_000n);
}

/** The validator methods by name. */
export const VALIDATOR_METHODS = {
  getClusterNodes, getHealth, getVersion, getIdentity, getGenesisHash, getEpochInfo, getEpochSchedule, getLeaderSchedule,
  getVoteAccounts, getStakeMinimumDelegation,
};
