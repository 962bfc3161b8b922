import { verifySecret, type DependencyContainer, type InjectionToken, type SecretCheck } from '../../core/index.js';

/**
 * How the file-storage API checks a secret against a scrypt hash: both the real check of a key's secret
 * and the decoy check of a refused key go through it. Registered by nothing by default ({@link verifySecret}
 * is used); register one (a wrapper that counts, an external verifier) to observe or replace the check.
 */
export const IPFS_SECRET_CHECK: InjectionToken<SecretCheck> = Symbol.for('tollgate.ipfs.SecretCheck');

/** The registered {@link IPFS_SECRET_CHECK}, else {@link verifySecret}. */
export function secretCheckOf(container: DependencyContainer): SecretCheck {
  return container.isRegistered(IPFS_SECRET_CHECK, true) ? container.resolve(IPFS_SECRET_CHECK) : verifySecret;
}
