import { TopUpsToken, type TopUpRequest } from '../../core/plugin-api.js';
import type { GatewayRuntime } from '../../core/transport-api.js';
import { WS_TRANSPORT } from './options.js';

/** The 4402 close reason without a top-up offer. */
export const EXHAUSTED_REASON = 'daily credit limit reached';
/** RFC 6455: a close frame's reason holds at most 123 bytes of UTF-8. */
const MAX_REASON_BYTES = 123;

/**
 * The 4402 close reason for a key whose balance ran out: `daily credit limit reached`, and, when the
 * gateway's `TopUps` offers the key a way to more credits, its hint after a `; ` (the payments plugin's:
 * `x402: top up over HTTP, then reconnect`), cut to the 123 bytes a close reason holds.
 */
export function exhaustedReason(gateway: GatewayRuntime, request: Omit<TopUpRequest, 'transport'>): string {
  const { container } = gateway;
  if (!container.isRegistered(TopUpsToken, true)) return EXHAUSTED_REASON;
  let hint: string | undefined;
  try {
    hint = container.resolve(TopUpsToken).offer({ ...request, transport: WS_TRANSPORT })?.closeHint;
  } catch (error) {
    gateway.logger.error({ err: error }, 'the top-up offer of a 4402 close failed');
  }
  if (hint === undefined || hint === '') return EXHAUSTED_REASON;
  const reason = Buffer.from(`${EXHAUSTED_REASON}; ${hint}`);
  if (reason.length <= MAX_REASON_BYTES) return reason.toString();
  // Cut on a character boundary: a UTF-8 decoder drops the partial character's bytes as U+FFFD, so trim that.
  return reason.subarray(0, MAX_REASON_BYTES).toString().replace(/\uFFFD+$/, '');
}
