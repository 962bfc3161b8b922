import type { Logger } from 'pino';
import type { DedupMarks } from '../../core/store-api.js';
import type { RedisConnection } from './connection.js';
import { OutageWarning } from './outage-warning.js';

/**
 * KEYS: the mark. ARGV: now, window ms. A mark is live while its value (its expiry, by the gateway's
 * clock) is after now; Redis's own expiry (the same window, by Redis's clock) only collects it. 1 when
 * this call made the mark, 0 when a live one was there.
 */
const MARK = `
local expiry = tonumber(redis.call('GET', KEYS[1]) or '0')
if expiry > tonumber(ARGV[1]) then return 0 end
redis.call('SET', KEYS[1], tonumber(ARGV[1]) + tonumber(ARGV[2]), 'PX', ARGV[2])
return 1`;

/**
 * The {@link DedupMarks} in Redis, shared by every gateway instance: one key per mark,
 * `<prefix>dedup:<id>`, made by one script (so two instances marking at once make it once). When Redis
 * does not answer, a call counts as the first (it is charged: a repeat may then cost again, a first send
 * never goes free) and a warning is logged once per outage.
 */
export class RedisDedupMarks implements DedupMarks {
  readonly #conn: RedisConnection;
  readonly #prefix: string;
  readonly #outage: OutageWarning;

  constructor(connection: RedisConnection, logger?: Logger) {
    this.#conn = connection;
    this.#prefix = `${connection.settings.prefix}dedup:`;
    this.#outage = new OutageWarning(logger);
  }

  /** See {@link DedupMarks.mark}. */
  async mark(id: string, windowMs: number, now: number): Promise<boolean> {
    try {
      const made = await this.#conn.client.eval(MARK, 1, `${this.#prefix}${id}`, now, windowMs);
      this.#outage.succeeded();
      return made === 1;
    } catch (error) {
      this.#outage.failed(error, 'a repeated call could not be recognised: Redis did not answer; it is charged as a first one');
      return true;
    }
  }

  /** See {@link DedupMarks.unmark}. */
  async unmark(id: string): Promise<void> {
    try {
      await this.#conn.client.del(`${this.#prefix}${id}`);
    } catch (error) {
      this.#outage.failed(error, 'a refunded call\'s mark could not be taken back: Redis did not answer; a repeat within the window is not charged');
    }
  }
}
