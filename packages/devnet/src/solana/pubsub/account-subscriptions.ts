/**
 * `accountSubscribe` and `programSubscribe`: an account's (or a program's accounts') new state once
 * the slot that wrote it reaches the subscription's commitment.
 *
 * @module
 */
import { encodeAccount } from '../account-encoding.js';
import { ACCOUNT_ENCODINGS, readProgramFilters } from '../methods/accounts.js';
import { commitmentOf, readDataSlice, verifyPubkey } from '../methods/common.js';
import { positional, readConfig, readString, readVariant } from '../serde-params.js';
import { CommitmentGate, type Subscription, type SubscriptionContext, type SubscriptionKind } from './subscription.js';

/** Sends in order even where an encoding is asynchronous (zstd). */
function serial(): (task: () => Promise<void>) => void {
  let chain = Promise.resolve();
  return (task) => { chain = chain.then(task).catch(() => undefined); };
}

function readConfigAndEncoding(raw: unknown, struct: string) {
  const config = readConfig(raw, struct);
  const encoding = readVariant(config?.encoding, ACCOUNT_ENCODINGS) ?? 'binary';
  return { config, encoding, slice: readDataSlice(config?.dataSlice), commitment: commitmentOf(config) };
}

/** `accountSubscribe`. */
export const accountSubscribe: SubscriptionKind = {
  notification: 'accountNotification',
  unsubscribe: 'accountUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    const [address, raw] = positional(params, 1, 2);
    const pubkey = verifyPubkey(readString(address));
    const { encoding, slice, commitment } = readConfigAndEncoding(raw, 'RpcAccountInfoConfig');
    const send = serial();
    let lastSlot = -1n;
    const gate = new CommitmentGate<null>(node, commitment, (_, slot) => {
      if (slot === lastSlot) return; // one notification per slot that wrote it
      lastSlot = slot;
      send(async () => {
        const account = node.getAccount(pubkey);
        // A closed account is reported as agave reports it: zero lamports, no data, the system program.
        const value = account === null
          ? await encodeAccount(node, pubkey, { lamports: 0n, data: new Uint8Array(0), owner: '11111111111111111111111111111111', executable: false, rentEpoch: 0n }, encoding, slice)
          : await encodeAccount(node, pubkey, account, encoding, slice);
        notify({ context: { slot }, value });
      });
    });
    return {
      onAccounts(addresses, slot) { if (addresses.includes(pubkey)) gate.push(slot, null); },
      onSlot() { gate.flush(); },
    };
  },
};

/** `programSubscribe`. */
export const programSubscribe: SubscriptionKind = {
  notification: 'programNotification',
  unsubscribe: 'programUnsubscribe',
  create(params: unknown, { node, notify }: SubscriptionContext): Subscription {
    const [address, raw] = positional(params, 1, 2);
    const program = verifyPubkey(readString(address));
    const { config, encoding, slice, commitment } = readConfigAndEncoding(raw, 'RpcProgramAccountsConfig');
    const filters = readProgramFilters(config?.filters);
    const send = serial();
    const gate = new CommitmentGate<readonly string[]>(node, commitment, (addresses, slot) => {
      send(async () => {
        for (const pubkey of addresses) {
          const account = node.getAccount(pubkey);
          if (account === null || account.owner !== program || !filters.every((f) => f(account))) continue;
          notify({ context: { slot }, value: { pubkey, account: await encodeAccount(node, pubkey, account, encoding, slice) } });
        }
      });
    });
    return {
      onAccounts(addresses, slot) { gate.push(slot, addresses); },
      onSlot() { gate.flush(); },
    };
  },
};
