import { createHash } from 'node:crypto';
import { Errors, GatewayError, step, verifySecret, type RequestContext, type StageDefinition } from '../../../core/index.js';
import { isIpfsNetwork } from '../family.js';
import type { ResolvedIpfsSettings } from '../settings.js';

/** The stage's name; it runs right after `authenticate`. */
export const CREDENTIALS_STAGE = 'ipfsCredentials';

const MAX_REMEMBERED = 10_000;

function refuse(): GatewayError {
  return new GatewayError(Errors.UNAUTHORIZED, { message: 'invalid API key or secret' });
}

/**
 * Checks the secret of a file-storage call against the key's `secretHash` (scrypt, constant-time
 * comparison). A key without a secret cannot use the API. A verified secret is remembered for
 * `secretCacheMs` (by a SHA-256 of key, secret and hash, never the secret itself), so scrypt runs once
 * per client rather than once per request; failed checks are rate-limited per key, since each costs a
 * scrypt run. Calls to other networks pass untouched.
 */
export function credentialsStage(settings: ResolvedIpfsSettings): StageDefinition {
  return {
    name: CREDENTIALS_STAGE,
    after: 'authenticate',
    create({ limiter, clock }) {
      const verified = new Map<string, number>();
      const pending = new Map<string, Promise<boolean>>();

      const remember = (id: string, now: number): void => {
        if (settings.secretCacheMs === 0) return;
        verified.delete(id);
        verified.set(id, now + settings.secretCacheMs);
        if (verified.size > MAX_REMEMBERED) verified.delete(verified.keys().next().value!);
      };

      const check = async (ctx: RequestContext, secret: string, secretHash: string, id: string): Promise<void> => {
        let verifying = pending.get(id);
        if (verifying === undefined) {
          verifying = verifySecret(secret, secretHash).finally(() => pending.delete(id));
          pending.set(id, verifying);
        }
        if (await verifying) {
          remember(id, clock.now());
          return;
        }
        const rate = settings.secretFailuresPerSecond;
        const decision = await limiter.take(`ipfs-secret-failures:${ctx.key!.id}`, 1, rate, Math.max(1, rate), clock.now());
        if (!decision.ok) {
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
          throw new GatewayError(Errors.RATE_LIMITED, { message: 'too many failed secret checks for this key', headers: { 'retry-after': String(seconds) } });
        }
        throw refuse();
      };

      return step((ctx) => {
        if (!isIpfsNetwork(ctx.network)) return;
        const secret = ctx.credentials.secret;
        const secretHash = ctx.key?.secretHash;
        if (secret === undefined || secret === '' || secretHash === undefined) throw refuse();
        const id = createHash('sha256').update(ctx.credentials.apiKey ?? '').update('\0').update(secret).update('\0').update(secretHash).digest('base64');
        const until = verified.get(id);
        if (until !== undefined) {
          if (until > clock.now()) return;
          verified.delete(id);
        }
        return check(ctx, secret, secretHash, id);
      });
    },
  };
}
