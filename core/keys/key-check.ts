import { GatewayError } from '../errors/gateway-error.js';
import { Errors } from '../errors/catalog.js';
import type { GatewayConfig } from '../config/types.js';
import type { ApiKeyRecord, KeyStore } from '../contracts/keys.js';
import type { KeyAccess, KeyCheck } from '../contracts/runtime.js';
import { isPromise } from '../util/maybe-promise.js';
import { planMap } from './plan-book.js';
import type { PlanLookup } from '../contracts/keys.js';

/**
 * Admits a key record found in the key store: live, and on a plan the gateway serves. A key's plan is
 * found by `plans` (the config's and the managed ones, in memory), or among the config's plans. Anything
 * else (no record, a revoked key, an unknown plan) is refused with `UNAUTHORIZED`, alike.
 */
export function createKeyAdmission(config: GatewayConfig, plans?: PlanLookup): (key: ApiKeyRecord | undefined) => KeyAccess {
  const configPlans = planMap(config.plans);
  const planOf = plans ?? ((name: string) => configPlans.get(name));
  return (key) => {
    const plan = key === undefined ? undefined : planOf(key.plan);
    if (key === undefined || key.revoked === true || plan === undefined) throw new GatewayError(Errors.UNAUTHORIZED);
    return { key, plan };
  };
}

/** The gateway's one key check: the `authenticate` stage and a transport's handshake both use it. */
export function createKeyCheck(keys: KeyStore, config: GatewayConfig, plans?: PlanLookup): KeyCheck {
  const accept = createKeyAdmission(config, plans);
  return ({ apiKey, keyHint }) => {
    if (apiKey === undefined || apiKey === '') throw new GatewayError(Errors.UNAUTHORIZED, { message: keyHint === undefined ? 'API key required' : `API key required in ${keyHint}` });
    const found = keys.find(apiKey);
    return isPromise(found) ? found.then(accept) : accept(found);
  };
}
