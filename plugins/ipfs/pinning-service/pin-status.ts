import { pinIdOf, type PinRecord } from '../../../core/store-api.js';
import type { PinQuery } from './methods.js';

/** The spec's `PinStatus`. */
export interface PinStatusObject {
  readonly requestid: string;
  readonly status: 'queued' | 'pinning' | 'pinned' | 'failed';
  readonly created: string;
  readonly pin: { readonly cid: string; readonly name?: string; readonly origins?: readonly string[]; readonly meta?: Readonly<Record<string, string>> };
  readonly delegates: readonly string[];
  readonly info?: Readonly<Record<string, string>>;
}

/** A pin as the spec's `PinStatus` (its `requestid`: its pin id, the CID of a file API pin); `info.dag_size` once the node holds it, `info.status_details` when it failed. */
export function pinStatusOf(pin: PinRecord, delegates: readonly string[]): PinStatusObject {
  const status = pin.status ?? 'pinned';
  const info: Record<string, string> = {};
  if (status === 'pinned') info.dag_size = String(pin.bytes);
  if (pin.statusDetails !== undefined) info.status_details = pin.statusDetails;
  return {
    requestid: pinIdOf(pin),
    status,
    created: new Date(pin.createdAt).toISOString(),
    pin: {
      cid: pin.cid,
      ...(pin.name === undefined ? {} : { name: pin.name }),
      ...(pin.origins === undefined ? {} : { origins: pin.origins }),
      ...(pin.meta === undefined ? {} : { meta: pin.meta }),
    },
    delegates,
    ...(Object.keys(info).length === 0 ? {} : { info }),
  };
}

function nameMatches(query: PinQuery, name: string | undefined): boolean {
  if (query.name === undefined) return true;
  if (name === undefined) return false;
  switch (query.match ?? 'exact') {
    case 'exact': return name === query.name;
    case 'iexact': return name.toLowerCase() === query.name.toLowerCase();
    case 'partial': return name.includes(query.name);
    case 'ipartial': return name.toLowerCase().includes(query.name.toLowerCase());
  }
}

/**
 * `GET /pins`: the pins matching every filter, newest first, and how many match. With no `status`
 * filter only pinned pins are listed (the spec's default, and `ipfs pin remote ls`'s); `before` and
 * `after` are exclusive bounds on `created`, the spec's way to page back from the oldest result shown.
 */
export function selectPins(pins: readonly PinRecord[], query: PinQuery): { readonly count: number; readonly results: PinRecord[] } {
  const statuses = new Set<string>(query.status ?? ['pinned']);
  const cids = query.cid === undefined ? undefined : new Set(query.cid);
  const before = query.before === undefined ? undefined : Date.parse(query.before);
  const after = query.after === undefined ? undefined : Date.parse(query.after);
  const meta = Object.entries(query.meta ?? {});
  const matching = pins.filter(
    (pin) =>
      statuses.has(pin.status ?? 'pinned') &&
      (cids === undefined || cids.has(pin.cid)) &&
      nameMatches(query, pin.name) &&
      (before === undefined || pin.createdAt < before) &&
      (after === undefined || pin.createdAt > after) &&
      meta.every(([k, v]) => pin.meta?.[k] === v),
  );
  matching.sort((a, b) => b.createdAt - a.createdAt || (pinIdOf(a) < pinIdOf(b) ? 1 : pinIdOf(a) > pinIdOf(b) ? -1 : 0));
  return { count: matching.length, results: matching.slice(0, query.limit ?? 10) };
}
