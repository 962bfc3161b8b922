import { randomBytes } from 'node:crypto';

/** Random per process, so ids of two gateway instances (or two runs of one) never meet. */
const PROCESS_PREFIX = randomBytes(9).toString('base64url');
let counter = 0;

/**
 * A new debit id: unique across processes and restarts, cheap enough for every call. Ledgers key every
 * write of a debit (the debit itself, its refund) on it, so a write that is retried, or that a store
 * applies late after a timeout, takes effect at most once.
 */
export function newDebitId(): string {
  counter++;
  return `${PROCESS_PREFIX}.${counter.toString(36)}`;
}
