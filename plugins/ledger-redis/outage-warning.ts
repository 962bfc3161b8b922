import type { Logger } from 'pino';

/**
 * A warning logged once per Redis outage by a service that carries on without Redis (a budget not
 * checked, a repeat not recognised): the first failure is logged, the next ones are not until a command
 * succeeds again.
 */
export class OutageWarning {
  readonly #logger: Logger | undefined;
  #warned = false;

  constructor(logger: Logger | undefined) {
    this.#logger = logger;
  }

  /** Logs `message` with the failure's reason and `context`, unless this outage was already logged. */
  failed(error: unknown, message: string, context: Record<string, unknown> = {}): void {
    if (!this.#warned) this.#logger?.warn({ ...context, reason: (error as Error).message }, message);
    this.#warned = true;
  }

  /** A command succeeded: the next failure is a new outage. */
  succeeded(): void {
    this.#warned = false;
  }
}
