/**
 * Refusals of the security stage: which setting refused a call and how to fix it, as the client gets it.
 *
 * @module
 */
import { Errors, GatewayError } from '../../core/plugin-api.js';

/** Why a call was refused: the setting that refused it, what the client sent, and what to change. */
export interface Refusal {
  /** The setting, as named in a key's security settings (`origins`, `requireSecret`, `jwt.audience`...). */
  readonly setting: string;
  /** What is wrong (`origin not allowed: https://evil.test`), repeating only what the client sent. */
  readonly reason: string;
  /** How to fix it, for the client or the key's owner. */
  readonly fix: string;
}

/**
 * The client's error for `refusal`: `FORBIDDEN` (code -33100, HTTP 403) with the reason and the fix in the
 * message, and `{ setting, fix }` in `error.data`.
 */
export function refusalError(refusal: Refusal): GatewayError {
  return new GatewayError(Errors.FORBIDDEN, {
    message: `${refusal.reason}; fix: ${refusal.fix}`,
    data: { setting: refusal.setting, fix: refusal.fix },
  });
}

const MAX_ECHO = 100;

/** A client-sent value made safe to put in a message: printable ASCII, at most 100 characters. */
export function echo(value: string): string {
  const printable = value.replace(/[^\x20-\x7e]/g, '?');
  return printable.length > MAX_ECHO ? `${printable.slice(0, MAX_ECHO)}...` : printable;
}
