import { randomBytes } from 'node:crypto';
import { hashSecret, isPromise, step, type ApiKeyRecord, type RequestContext, type StageDefinition } from '../../../core/index.js';
import { isIpfsNetwork } from '../family.js';
import { refuseCredentials } from './credentials.js';
import { secretCheckOf } from '../secret-check.js';

/** The stage's name; it runs right before `authenticate`. */
export const UNKNOWN_KEY_STAGE = 'ipfsUnknownKey';

/**
 * Makes a refused file-storage key cost what a wrong secret costs: a key that does not exist, is revoked
 * or has no secret is verified against a dummy scrypt hash before it is refused, with the same answer
 * as a wrong secret. Without it, how fast the refusal comes would tell which keys exist.
 */
export function unknownKeyStage(): StageDefinition {
  return {
    name: UNKNOWN_KEY_STAGE,
    before: 'authenticate',
    create({ keys, container }) {
      const verify = secretCheckOf(container);
      // A hash of a random secret nobody knows, made once, on the first refusal.
      let dummy: Promise<string> | undefined;
      const refuseAfterScrypt = async (secret: string): Promise<never> => {
        dummy ??= hashSecret(randomBytes(32).toString('base64url'));
        await verify(secret, await dummy);
        throw refuseCredentials();
      };
      const check = (ctx: RequestContext, record: ApiKeyRecord | undefined): void | Promise<never> => {
        if (record !== undefined && record.revoked !== true && record.secretHash !== undefined) return;
        return refuseAfterScrypt(ctx.credentials.secret ?? '');
      };
      return step((ctx) => {
        if (!isIpfsNetwork(ctx.network)) return;
        const apiKey = ctx.credentials.apiKey;
        if (apiKey === undefined || apiKey === '') return refuseAfterScrypt(ctx.credentials.secret ?? '');
        const found = keys.find(apiKey);
        if (isPromise(found)) return found.then((record) => check(ctx, record));
        return check(ctx, found);
      });
    },
  };
}
