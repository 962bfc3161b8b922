import { FacilitatorUnavailableError, type AuthorizationState, type PaymentFacilitator } from './facilitator.js';
import { viem, viemAccounts, x402Evm, x402EvmFacilitator, x402Facilitator } from './peers.js';
import type { Network, PaymentPayload, PaymentRequirements, SettleResponse, VerifyResponse } from './x402-types.js';

/** Options of {@link embeddedFacilitator}. */
export interface EmbeddedFacilitatorOptions {
  /** The EVM JSON-RPC URL settlement transactions are sent through (and reads are made on). */
  readonly rpcUrl?: string;
  /**
   * Instead of `rpcUrl`: sends each JSON-RPC call itself (resolves with the node's result, rejects with
   * its error); the plugin uses it to send through one of the gateway's own networks.
   */
  readonly request?: (method: string, params: readonly unknown[]) => Promise<unknown>;
  /** The operator's settlement key: it signs settlement transactions and pays their gas. */
  readonly settlementKey: `0x${string}`;
  /** The CAIP-2 networks it settles on (`eip155:8453`); a payment on another is refused. */
  readonly networks: readonly Network[];
  /** How long a settlement waits for its receipt, in ms. */
  readonly confirmationTimeoutMs: number;
}

/** An embedded facilitator, with the address that pays for settlements. */
export interface EmbeddedFacilitator extends PaymentFacilitator {
  /** The settlement key's address (it needs the chain's native coin for gas). */
  readonly address: `0x${string}`;
}

const AUTHORIZATION_STATE = [{
  type: 'function', name: 'authorizationState', stateMutability: 'view',
  inputs: [{ name: 'authorizer', type: 'address' }, { name: 'nonce', type: 'bytes32' }], outputs: [{ name: '', type: 'bool' }],
}] as const;
const AUTHORIZATION_USED = {
  type: 'event', name: 'AuthorizationUsed',
  inputs: [{ name: 'authorizer', type: 'address', indexed: true }, { name: 'nonce', type: 'bytes32', indexed: true }],
} as const;
/** How many blocks back the `AuthorizationUsed` log of a used authorization is looked for. */
const LOG_LOOKBACK = 10_000n;

/**
 * A facilitator inside the gateway: `@x402/evm`'s exact-scheme facilitator (EIP-3009
 * `transferWithAuthorization`, and Permit2) under `@x402/core`'s `x402Facilitator`, signing with the
 * operator's settlement key and sending through `rpcUrl` (or `request`). Its verify simulates the transfer on chain,
 * so an empty wallet is refused before anything is sent; its settle checks the signature, recipient,
 * amount and validity window again, sends the transaction and waits for its receipt.
 */
export function embeddedFacilitator(options: EmbeddedFacilitatorOptions): EmbeddedFacilitator {
  const account = viemAccounts.privateKeyToAccount(options.settlementKey);
  const { request, rpcUrl } = options;
  if ((request === undefined) === (rpcUrl === undefined)) throw new TypeError('embeddedFacilitator: give exactly one of rpcUrl or request');
  const transport = request !== undefined
    ? viem.custom({ request: ({ method, params }: { method: string; params?: unknown }) => request(method, Array.isArray(params) ? params : params === undefined ? [] : [params]) }, { retryCount: 0 })
    : viem.http(rpcUrl, { retryCount: 0 });
  const wallet = viem.createWalletClient({ account, transport }).extend(viem.publicActions);
  const signer = x402Evm.toFacilitatorEvmSigner(
    {
      address: account.address,
      readContract: (args) => wallet.readContract(args as never),
      verifyTypedData: (args) => wallet.verifyTypedData(args as never),
      writeContract: (args) => wallet.writeContract({ ...args, chain: null } as never),
      sendTransaction: (args) => wallet.sendTransaction({ ...args, chain: null }),
      waitForTransactionReceipt: (args) => wallet.waitForTransactionReceipt(args),
      getCode: (args) => wallet.getCode(args),
    },
    { confirmationTimeoutMs: options.confirmationTimeoutMs },
  );
  const facilitator = new x402Facilitator.x402Facilitator().register([...options.networks], new x402EvmFacilitator.ExactEvmScheme(signer));
  return {
    kind: 'embedded',
    address: account.address,
    async verify(payload: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse> {
      try {
        return await facilitator.verify(payload, requirements);
      } catch (error) {
        throw new FacilitatorUnavailableError('verify', (error as Error).message, { cause: error });
      }
    },
    async settle(payload: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse> {
      try {
        return await facilitator.settle(payload, requirements);
      } catch (error) {
        throw new FacilitatorUnavailableError('settle', (error as Error).message, { cause: error });
      }
    },
    async authorizationState(_network: string, asset: string, authorizer: string, nonce: string): Promise<AuthorizationState> {
      let used: boolean;
      try {
        used = await wallet.readContract({ address: asset as `0x${string}`, abi: AUTHORIZATION_STATE, functionName: 'authorizationState', args: [authorizer as `0x${string}`, nonce as `0x${string}`] });
      } catch (error) {
        throw new FacilitatorUnavailableError('authorizationState', (error as Error).message, { cause: error });
      }
      if (!used) return { used, transaction: undefined };
      // Where it was used: the token's AuthorizationUsed log, looked for in the recent blocks (a node may
      // refuse a wider range); not finding it leaves the transaction unknown, the payment still settled.
      try {
        // Never viem's cached block number (it keeps one for its polling interval): a block number from
        // before the transfer's block would leave the log out of the range.
        const latest = await wallet.getBlockNumber({ cacheTime: 0 });
        const logs = await wallet.getLogs({
          address: asset as `0x${string}`,
          event: AUTHORIZATION_USED,
          args: { authorizer: authorizer as `0x${string}`, nonce: nonce as `0x${string}` },
          fromBlock: latest > LOG_LOOKBACK ? latest - LOG_LOOKBACK : 0n,
          toBlock: 'latest',
        });
        return { used, transaction: logs.at(-1)?.transactionHash ?? undefined };
      } catch {
        return { used, transaction: undefined };
      }
    },
  };
}
