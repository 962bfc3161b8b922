import { pino, type DestinationStream, type Logger } from 'pino';

/**
 * Fields pino blanks in every log line, wherever a plugin or an error puts them: credentials that must
 * never be written (`[redacted]`). A second line of defence: Tollgate's own log calls never pass them.
 */
export const REDACTED_PATHS: readonly string[] = [
  'apiKey', '*.apiKey', 'secret', '*.secret', 'token', '*.token', 'password', '*.password',
  'credentials', '*.credentials', 'authorization', '*.authorization', 'headers.authorization', '*.headers.authorization',
  'headers.cookie', '*.headers.cookie',
  // x402: the facilitator's settlement key and the secret wallet keys are derived from (config sections,
  // should one ever be logged), and a payment's signed authorization (usable by whoever reads it first).
  'settlementKey', '*.settlementKey', 'keySecret', '*.keySecret', 'headers["payment-signature"]', '*.headers["payment-signature"]',
];

/**
 * The gateway logger the example gateway uses: pino at `level`, with `service: tollgate` on every line
 * and {@link REDACTED_PATHS} blanked.
 *
 * @example
 * ```ts
 * const gateway = await createGateway({ config, plugins, logger: gatewayLogger('info') });
 * ```
 */
export function gatewayLogger(level: string, destination?: DestinationStream): Logger {
  const options = { level, base: { service: 'tollgate' }, redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' } };
  return destination === undefined ? pino(options) : pino(options, destination);
}
