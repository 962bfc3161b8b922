import { Errors, GatewayError, type DependencyContainer, type InjectionToken } from '../../core/plugin-api.js';
import { type SecretCheck } from '../../core/transport-api.js';
import type { ScryptWorker } from './scrypt-worker.js';

/**
 * How the file-storage API checks a secret against a scrypt hash: both the real check of a key's secret
 * and the decoy check of a refused key go through it. Registered by nothing by default (the plugin's
 * own checker thread is used); register one (a wrapper that counts, an external verifier) to observe or
 * replace the check.
 */
export const IPFS_SECRET_CHECK: InjectionToken<SecretCheck> = Symbol.for('tollgate.ipfs.SecretCheck');

/** The registered `IPFS_SECRET_CHECK`, else a check on `worker`, which refuses with 429 when its queue is full. */
export function secretCheckOf(container: DependencyContainer, worker: ScryptWorker): SecretCheck {
  if (container.isRegistered(IPFS_SECRET_CHECK, true)) return container.resolve(IPFS_SECRET_CHECK);
  return (secret, secretHash) => {
    const verified = worker.verify(secret, secretHash);
    if (verified !== undefined) return verified;
    return Promise.reject(new GatewayError(Errors.RATE_LIMITED, { message: 'too many secret checks: retry later', headers: { 'retry-after': '1' } }));
  };
}
