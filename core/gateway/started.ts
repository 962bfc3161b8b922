import type { Logger } from 'pino';
import { PluginError } from '../plugin/plugin-error.js';

/**
 * What a gateway has started, newest last: each entry knows how to stop itself. Startup pushes onto it as
 * it goes; a failure, or `close()`, stops everything in reverse order, so nothing is left running, open
 * or scheduled.
 */
export class Started {
  readonly #stops: Array<{ readonly name: string; readonly stop: () => unknown }> = [];
  readonly #logger: Logger;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** Remembers something that now runs and how to stop it. */
  add(name: string, stop: () => unknown): void {
    this.#stops.push({ name, stop });
  }

  /**
   * Runs `start` for `name`; on failure, stops everything started so far (newest first) and rejects with a
   * `PLUGIN_START_FAILED` error naming `plugin` when a plugin failed (a `PluginError` thrown by `start`
   * keeps its own message and code).
   */
  async start(name: string, start: () => unknown, stop?: () => unknown, plugin?: string): Promise<void> {
    try {
      await start();
    } catch (error) {
      await this.stopAll();
      if (PluginError.is(error)) throw error;
      throw new PluginError(`${name} failed to start: ${(error as Error)?.message ?? String(error)}`, { code: 'PLUGIN_START_FAILED', plugin, cause: error });
    }
    if (stop !== undefined) this.add(name, stop);
  }

  /** Stops everything, newest first; a failure to stop is logged and does not stop the others. */
  async stopAll(): Promise<void> {
    while (this.#stops.length > 0) {
      const { name, stop } = this.#stops.pop()!;
      try {
        await stop();
      } catch (error) {
        this.#logger.error({ err: error, part: name }, 'failed to stop');
      }
    }
  }
}
