/**
 * `{<value>}`: a Redis Cluster hash tag, so every Redis key that carries it lands in the same hash slot
 * (one script may then touch them all). Braces and `%` in the value are percent-encoded, which keeps the
 * tag one tag and keeps distinct values distinct.
 */
export function hashTag(value: string): string {
  // The usual id holds none of them: no regular expression per name.
  if (value.indexOf('%') === -1 && value.indexOf('{') === -1 && value.indexOf('}') === -1) return `{${value}}`;
  return `{${value.replace(/[%{}]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}}`;
}

/**
 * The names of the store's Redis keys. Everything of one API key (its record, balances (daily and paid), top-up ids, throughput
 * bucket, usage, and the markers of its writes) shares the hash tag of the key's id, so each script
 * touches one hash slot of a Redis Cluster. Three names stand apart, each in a slot of its own: the entry
 * from an API key's hash to its id (looked up by hash, before the id is known), the set of every id, and
 * the hash of the managed plans.
 */
export class RedisKeyNames {
  /** The prefix of every name (`prefix` setting). */
  readonly prefix: string;

  constructor(prefix: string) {
    this.prefix = prefix;
  }

  /** A key's balance on a UTC day: `<prefix>bal:<day>:{<key id>}`. */
  balance(day: string, keyId: string): string {
    return `${this.prefix}bal:${day}:${hashTag(keyId)}`;
  }

  /** A key's paid (bought or topped-up) balance, never expiring: `<prefix>paid:{<key id>}`. */
  paid(keyId: string): string {
    return `${this.prefix}paid:${hashTag(keyId)}`;
  }

  /** The set of the ids of the top-ups applied to a key's paid balance: `<prefix>topups:{<key id>}`. */
  topUps(keyId: string): string {
    return `${this.prefix}topups:${hashTag(keyId)}`;
  }

  /**
   * A throughput bucket, named by the key id it belongs to: `<prefix>bucket:{<bucket>}`, a string
   * `<tokens>|<at>` (a string, so the debit scripts read it in the `MGET` of the balances). Earlier
   * versions kept a hash under `<prefix>rate:{<bucket>}`; a new name, so an instance of either version
   * never meets the other's type (`WRONGTYPE`) while both run during an upgrade.
   */
  bucket(bucket: string): string {
    return `${this.prefix}bucket:${hashTag(bucket)}`;
  }

  /** A key's usage hash on a UTC day, by network and method: `<prefix>usage:<day>:{<key id>}`. */
  usage(day: string, keyId: string): string {
    return `${this.prefix}usage:${day}:${hashTag(keyId)}`;
  }

  /**
   * A key's usage hash on a UTC day as earlier versions wrote it, by method only:
   * `<prefix>use:<day>:{<key id>}`. Read (as network '') until it expires; never written.
   */
  usageByMethod(day: string, keyId: string): string {
    return `${this.prefix}use:${day}:${hashTag(keyId)}`;
  }

  /** The hash of the plans operators manage, field by plan name: `<prefix>plans`. */
  get plans(): string {
    return `${this.prefix}plans`;
  }

  /** The pub/sub channel on which plan changes are announced: `<prefix>plans:changed`. */
  get planChanges(): string {
    return `${this.prefix}plans:changed`;
  }

  /** The marker of one write (a debit, refund, settlement or usage batch): `<prefix>once:{<key id>}:<write id>`. */
  marker(keyId: string, writeId: string): string {
    return `${this.prefix}once:${hashTag(keyId)}:${writeId}`;
  }

  /** The marker of a write to `name` (one of a key's names above), in the same hash slot. */
  markerBeside(name: string, writeId: string): string {
    const open = name.indexOf('{');
    return `${this.prefix}once:${name.slice(open, name.indexOf('}', open) + 1)}:${writeId}`;
  }

  /** A key's record: `<prefix>key:{<key id>}`. */
  record(keyId: string): string {
    return `${this.prefix}key:${hashTag(keyId)}`;
  }

  /** The entry from an API key's SHA-256 to its id: `<prefix>keyhash:{<hash>}`. */
  keyHash(hash: string): string {
    return `${this.prefix}keyhash:${hashTag(hash)}`;
  }

  /** The set of every key id: `<prefix>keys`. */
  get ids(): string {
    return `${this.prefix}keys`;
  }

  /** The pub/sub channel on which key changes are announced: `<prefix>keys:changed`. */
  get changes(): string {
    return `${this.prefix}keys:changed`;
  }
}
