import { randomBytes } from 'node:crypto';
import { hashSecret, type ApiKeyRecord } from '../../../core/store-api.js';
import { isPromise, step, type RequestContext, type StageDefinition } from '../../../core/plugin-api.js';
import { isIpfsNetwork } from '../family.js';
import { refuseCredentials } from './credentials.js';
import { secretCheckOf } from '../secret-check.js';
import type { SecretGuard } from '../secret-guard.js';

/** The stage's name; it runs right before `authenticate`. */
export const UNKNOWN_KEY_STAGE = 'ipfsUnknownKey';

/**
 * Makes a refused file-storage key cost what a wrong secret costs: a key that does not exist, is revoked
 * or has no secret is verified against a dummy scrypt hash before it is refused, with the same answer
 * as a wrong secret. Without it, how fast the refusal comes would tell which keys exist. The decoy check
 * takes from the same refusal budget as a real one (see {@link SecretGuard}), so a flood of made-up keys
 * costs at most that budget's scrypt runs, on the guard's thread. The record it found is left on the
 * context for `authenticate`, so a request reads the key store once.
 */
export function unknownKeyStage(guard: SecretGuard): StageDefinition {
  return {
    name: UNKNOWN_KEY_STAGE,
    before: 'authenticate',
    create({ keys, container, clock }) {
      const verify = secretCheckOf(container, guard.worker);
      // A hash of a random secret nobody knows, made once, on the first refusal.
      let dummy: Promise<string> | undefined;
      const refuseAfterScrypt = async (ctx: RequestContext): Promise<never> => {
        const refused = guard.take(ctx.meta.remoteAddress, clock);
        if (refused !== undefined) return refused;
        const secret = ctx.credentials.secret ?? '';
        dummy ??= hashSecret(randomBytes(32).toString('base64url'));
        await verify(secret, await dummy);
        throw refuseCredentials();
      };
      const check = (ctx: RequestContext, record: ApiKeyRecord | undefined): void | Promise<never> => {
        if (record === undefined || record.revoked === true || record.secretHash === undefined) return refuseAfterScrypt(ctx);
        // authenticate admits the record found here instead of looking the key up again.
        ctx.key = record;
      };
      return step((ctx) => {
        if (!isIpfsNetwork(ctx.network)) return;
        const apiKey = ctx.credentials.apiKey;
        if (apiKey === undefined || apiKey === '') return refuseAfterScrypt(ctx);
        const found = keys.find(apiKey);
        if (isPromise(found)) return found.then((record) => check(ctx, record));
        return check(ctx, found);
      });
    },
  };
}
