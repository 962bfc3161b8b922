// UTC days as ledgers and usage records key them.

const DAY_MS = 86_400_000;

/** The UTC day of `date` as `YYYY-MM-DD`. */
export function utcDay(date: Date): string {
  return date.toISOString().slice(0, 10);
}

/**
 * The UTC day of a time in ms, remembering the last day computed so the hot path formats a date string
 * once a day rather than once a call.
 */
export class UtcDayCache {
  #start = 0;
  #end = 0;
  #day = '';

  /** The UTC day (`YYYY-MM-DD`) of `ms`. */
  dayOf(ms: number): string {
    if (ms >= this.#start && ms < this.#end) return this.#day;
    this.#start = Math.floor(ms / DAY_MS) * DAY_MS;
    this.#end = this.#start + DAY_MS;
    this.#day = new Date(this.#start).toISOString().slice(0, 10);
    return this.#day;
  }
}

/** The next 00:00 UTC after `date`. */
export function nextUtcMidnight(date: Date): Date {
  return new Date(Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1));
}
