import type { Logger } from 'pino';
import { keyIdOf, type CallObserver, type RequestContext, type Clock } from '../../core/plugin-api.js';
import { chargedCredits } from './call-labels.js';

/** Longest method name logged as sent; longer ones are cut. */
const MAX_LOGGED_METHOD = 64;

/**
 * The loggable identity of a call's key: the key's id once authenticated, otherwise `key-` and the first
 * eight hex digits of the key's SHA-256 (enough to correlate, not to recover a key), or undefined when
 * the call had no key. Never the key itself.
 */
export function loggableKey(ctx: RequestContext): string | undefined {
  if (ctx.key !== undefined) return ctx.key.id;
  const apiKey = ctx.credentials.apiKey;
  return apiKey === undefined || apiKey === '' ? undefined : keyIdOf(apiKey);
}

/**
 * Structured access logs: one pino line per call, with the call's id, transport, network, method, key id
 * (or a hash prefix for an unknown key), HTTP status, error, credits charged, upstream, attempts and time.
 * Credentials never reach the line: it is built field by field from what is safe to log.
 */
export class AccessLogObserver implements CallObserver {
  readonly #logger: Logger;
  readonly #level: 'info' | 'debug' | 'trace';
  readonly #clock: Clock;

  constructor(logger: Logger, clock: Clock, level: 'info' | 'debug' | 'trace' = 'info') {
    this.#logger = logger.child({ log: 'access' });
    this.#level = level;
    this.#clock = clock;
  }

  callFinished(ctx: RequestContext): void {
    if (!this.#logger.isLevelEnabled(this.#level)) return;
    const method = ctx.call.method;
    const error = ctx.error;
    this.#logger[this.#level]({
      call: ctx.id,
      transport: ctx.transport,
      network: ctx.network.name,
      method: method.length > MAX_LOGGED_METHOD ? `${method.slice(0, MAX_LOGGED_METHOD)}…` : method,
      key: loggableKey(ctx),
      status: error?.httpStatus ?? 200,
      ...(error === undefined ? {} : { error: error.entry.name, code: error.code }),
      credits: chargedCredits(ctx),
      ...(ctx.servedBy === undefined ? {} : { upstream: ctx.servedBy.name }),
      attempts: ctx.attempts,
      ms: Math.max(0, this.#clock.now() - ctx.startedAt),
      ...(ctx.meta.remoteAddress === undefined ? {} : { remote: ctx.meta.remoteAddress }),
    }, 'call');
  }
}
