import type { InjectionToken } from '../../core/plugin-api.js';

/**
 * The bytes each key of `plan` may keep pinned (the plan's `storageBytes`); undefined when the plan sets
 * no limit or has no file storage.
 */
export type PlanStorageBytes = (plan: string) => number | undefined;

/**
 * The running file API's {@link PlanStorageBytes}, registered by the ipfs plugin so that views of a key's
 * stored bytes (the admin API's) show its allowance as the gateway applies it, `ipfs({...})` options
 * included. This file imports nothing at run time: the admin plugin reads the token without loading the
 * file API.
 */
export const PlanStorageBytesToken = Symbol.for('tollgate.ipfs.PlanStorageBytes') as InjectionToken<PlanStorageBytes>;
