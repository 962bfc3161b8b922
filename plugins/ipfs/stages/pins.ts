import { createUpstreamSender } from '../../../core/upstream-api.js';
import { Errors, GatewayError, keyOf, planOf, step, Tokens, type RequestContext, type StageDefinition, type UpstreamReply } from '../../../core/plugin-api.js';
import { pinIdOf, type PinRecord, type PinStore } from '../../../core/store-api.js';
import { parseContentPath } from '../content-path.js';
import { IPFS_REQUEST } from '../context-keys.js';
import { isIpfsNetwork } from '../family.js';
import { kuboErrorReply } from '../kubo-errors.js';
import { NodePinRequests, type NodeOutcome } from '../node-pins.js';
import type { ResolvedIpfsSettings } from '../settings.js';
import { storageLimitReached } from '../storage-limit.js';

/** The stage that serves the pin commands from the key's own pins; after `route` (the node requests use the call's route). */
export const PINS_STAGE = 'ipfsPins';

/** Go's `strconv.ParseBool`, with a bare flag (empty value) true; `fallback` when the option is absent. */
export function flag(options: Readonly<Record<string, string>>, names: readonly string[], fallback: boolean): boolean {
  for (const name of names) {
    const value = options[name];
    if (value !== undefined) return /^(|1|t|T|TRUE|true|True)$/.test(value);
  }
  return fallback;
}

function json(value: unknown, headers: Record<string, string> = {}): UpstreamReply {
  return { status: 200, headers: { 'content-type': 'application/json', ...headers }, body: Buffer.from(`${JSON.stringify(value)}\n`) };
}

/** The CID of a pin argument (`<cid>` or `/ipfs/<cid>`), as the node names it; a path below a CID is refused. */
function pinCid(arg: string): string {
  const { cid, segments } = parseContentPath(arg);
  if (segments.length > 0) throw new GatewayError(Errors.INVALID_PARAMS, { message: `pin a CID, not a path below one: ${arg}` });
  return cid.toString();
}

/** The plan's `storageBytes` for the call's key; undefined when the plan sets none. */
export function storageLimitOf(ctx: RequestContext, settings: ResolvedIpfsSettings): number | undefined {
  return settings.plans.get(planOf(ctx).name)?.storageBytes;
}

/** What the pin commands need. */
interface PinDeps {
  readonly store: () => PinStore;
  readonly node: NodePinRequests;
  readonly settings: ResolvedIpfsSettings;
  readonly now: () => number;
}

async function pinAdd(ctx: RequestContext, deps: PinDeps, args: readonly string[], options: Readonly<Record<string, string>>): Promise<UpstreamReply> {
  if (!flag(options, ['recursive', 'r'], true)) throw new GatewayError(Errors.INVALID_PARAMS, { message: 'direct pins are not offered: pin recursively (recursive=true)' });
  const keyId = keyOf(ctx).id;
  const store = deps.store();
  const limit = storageLimitOf(ctx, deps.settings);
  const name = options.name === undefined || options.name === '' ? undefined : options.name;
  const cids = args.map(pinCid);
  for (const cid of cids) {
    if ((await store.get(keyId, cid)) !== undefined) continue;
    const weighed = await deps.node.dagBytes(ctx, cid);
    if (!weighed.ok) return weighed.reply;
    // Recorded before the node pins, so a concurrent pin/rm of another key sees this key's pin and
    // leaves the node's in place; undone if the node fails.
    const added = await store.add({ keyId, cid, ...(name === undefined ? {} : { name }), bytes: weighed.value, createdAt: deps.now() }, limit);
    if (!added.ok) throw storageLimitReached(limit!, added.storedBytes, weighed.value);
    const pinned = await deps.node.pin(ctx, cid, name);
    if (!pinned.ok) {
      if (added.added) await store.remove(keyId, cid);
      return pinned.reply;
    }
  }
  return json({ Pins: cids });
}

/** Whether a pin holds its content on the node now (the file API's pins always; a pin request once `pinned`). */
function isPinned(pin: PinRecord): boolean {
  return (pin.status ?? 'pinned') === 'pinned';
}

/**
 * The key's pins of `cid` as the file API sees them, one pin: undefined unless one of them is pinned;
 * else the file API's own pin if it has one, or the oldest pinned request (for its name), weighing the
 * heaviest of them.
 */
async function heldPin(store: PinStore, keyId: string, cid: string): Promise<{ readonly pin: PinRecord; readonly all: PinRecord[] } | undefined> {
  const all = await store.pinsOf(keyId, cid);
  const pinned = all.filter(isPinned);
  if (pinned.length === 0) return undefined;
  const shown = pinned.find((p) => p.requestId === undefined) ?? pinned[0]!;
  return { pin: { ...shown, bytes: Math.max(...pinned.map((p) => p.bytes)) }, all };
}

/** The key's pins that hold content now, each CID once (see {@link heldPin}), oldest first. */
async function keyPins(store: PinStore, keyId: string): Promise<PinRecord[]> {
  const pins: PinRecord[] = [];
  const seen = new Set<string>();
  for (const pin of await store.list(keyId)) {
    if (!isPinned(pin) || seen.has(pin.cid)) continue;
    seen.add(pin.cid);
    pins.push((await heldPin(store, keyId, pin.cid))?.pin ?? pin);
  }
  return pins;
}

/**
 * What `roots` (the key's recursive pins) pin indirectly: every CID their DAGs link (the node's `refs`),
 * each once with the root it is first reached through, the roots themselves left out (a recursive pin is
 * listed as recursive, as kubo does). With `wanted`, the walk stops once each of them is found.
 */
async function indirectPins(ctx: RequestContext, deps: PinDeps, roots: readonly PinRecord[], wanted?: ReadonlySet<string>): Promise<NodeOutcome<Map<string, string>>> {
  const recursive = new Set(roots.map((pin) => pin.cid));
  const via = new Map<string, string>();
  for (const root of roots) {
    if (wanted !== undefined && [...wanted].every((cid) => via.has(cid))) break;
    const refs = await deps.node.refs(ctx, root.cid);
    if (!refs.ok) return refs;
    for (const ref of refs.value) if (!recursive.has(ref) && !via.has(ref)) via.set(ref, root.cid);
  }
  return { ok: true, value: via };
}

/** One entry of a `pin/ls` answer: kubo's `Type` is `recursive`, `indirect`, or `indirect through <root>` for an argument. */
interface ListedPin {
  readonly cid: string;
  readonly type: string;
  readonly name?: string | undefined;
}

/**
 * kubo's `pin/ls` over the key's pins, which are all recursive (the gateway offers no direct pins): `type`
 * `recursive` lists them, `indirect` what their DAGs link (each CID once, asked of the node with `refs`),
 * `all` (the default) both, `direct` nothing. With arguments each must be pinned as `type` asks (a CID
 * inside one of the key's pins is `indirect through <that pin>`), else the call fails naming it, as kubo.
 */
async function pinLs(ctx: RequestContext, deps: PinDeps, args: readonly string[], options: Readonly<Record<string, string>>): Promise<UpstreamReply> {
  const keyId = keyOf(ctx).id;
  const store = deps.store();
  const type = options.type ?? options.t ?? 'all';
  const names = flag(options, ['names', 'n'], options.name !== undefined);
  const quiet = flag(options, ['quiet', 'q'], false);
  const recursive = type === 'all' || type === 'recursive';
  const indirect = type === 'all' || type === 'indirect';
  let listed: ListedPin[] = [];
  // A CID the key holds through several pins (Pinning Service API requests beside the file API's) is one pin here.
  if (args.length > 0) {
    const cids = args.map(pinCid);
    const held = new Map<string, PinRecord>();
    for (const cid of cids) {
      const pin = (await heldPin(store, keyId, cid))?.pin;
      if (pin !== undefined) held.set(cid, pin);
    }
    // A recursive pin is never indirect too: only the others are looked for inside the key's pins.
    const unheld = new Set(cids.filter((cid) => !held.has(cid)));
    let via = new Map<string, string>();
    if (indirect && unheld.size > 0) {
      const found = await indirectPins(ctx, deps, await keyPins(store, keyId), unheld);
      if (!found.ok) return found.reply;
      via = found.value;
    }
    for (const [i, cid] of cids.entries()) {
      const pin = held.get(cid);
      const root = via.get(cid);
      if (pin !== undefined && recursive) listed.push({ cid, type: 'recursive', name: pin.name });
      else if (pin === undefined && root !== undefined) listed.push({ cid, type: `indirect through ${root}` });
      else return kuboErrorReply(`path '${args[i]}' is not pinned`);
    }
  } else {
    const pins = await keyPins(store, keyId);
    if (recursive) listed.push(...pins.map((pin) => ({ cid: pin.cid, type: 'recursive', name: pin.name })));
    // Indirect pins have no name: a name filter leaves none of them, so their walk is skipped.
    if (indirect && options.name === undefined) {
      const found = await indirectPins(ctx, deps, pins);
      if (!found.ok) return found.reply;
      for (const cid of found.value.keys()) listed.push({ cid, type: 'indirect' });
    }
  }
  if (options.name !== undefined) listed = listed.filter((p) => p.name === options.name);
  const entry = (pin: ListedPin): Record<string, string> => ({ ...(quiet ? {} : { Type: pin.type }), ...(names && pin.name !== undefined ? { Name: pin.name } : {}) });
  if (flag(options, ['stream', 's'], false)) {
    const lines = listed.map((pin) => `${JSON.stringify({ Cid: pin.cid, ...entry(pin) })}\n`).join('');
    return { status: 200, headers: { 'content-type': 'application/json', 'x-chunked-output': '1' }, body: Buffer.from(lines) };
  }
  return json({ Keys: Object.fromEntries(listed.map((pin) => [pin.cid, entry(pin)])) });
}

/** Removes every pin of `keyId` of `cid` and returns them. */
async function removeAll(store: PinStore, keyId: string, cid: string): Promise<PinRecord[]> {
  const removed: PinRecord[] = [];
  for (const pin of await store.pinsOf(keyId, cid)) {
    const gone = await store.remove(keyId, pinIdOf(pin));
    if (gone !== undefined) removed.push(gone);
  }
  return removed;
}

async function pinRm(ctx: RequestContext, deps: PinDeps, args: readonly string[]): Promise<UpstreamReply> {
  const keyId = keyOf(ctx).id;
  const store = deps.store();
  const cids = args.map(pinCid);
  // As kubo: nothing is removed unless every argument is pinned (here: by this key).
  for (const cid of cids) if ((await heldPin(store, keyId, cid)) === undefined) return kuboErrorReply('not pinned or pinned indirectly');
  for (const cid of cids) {
    // The key's whole hold of the CID goes: the file API's pin and its Pinning Service API requests.
    const removed = await removeAll(store, keyId, cid);
    // The node keeps content while any key pins it: another key's pin of the same CID is untouched.
    if (removed.length === 0 || (await store.pinnedByOthers(keyId, cid))) continue;
    const unpinned = await deps.node.unpin(ctx, cid);
    if (!unpinned.ok) {
      // The node still pins it: the pins stay the key's, so they can be removed again.
      for (const pin of removed) await store.add(pin, undefined);
      return unpinned.reply;
    }
  }
  return json({ Pins: cids });
}

async function pinUpdate(ctx: RequestContext, deps: PinDeps, args: readonly string[], options: Readonly<Record<string, string>>): Promise<UpstreamReply> {
  const keyId = keyOf(ctx).id;
  const store = deps.store();
  const [from, to] = args.map(pinCid) as [string, string];
  const unpin = flag(options, ['unpin'], true);
  const held = await heldPin(store, keyId, from);
  if (held === undefined) return kuboErrorReply("'from' cid was not recursively pinned already");
  const old = held.pin;
  const weighed = await deps.node.dagBytes(ctx, to);
  if (!weighed.ok) return weighed.reply;
  const limit = storageLimitOf(ctx, deps.settings);
  // The old pin's bytes are freed by the move: they count as room for the new one.
  const room = limit === undefined ? undefined : limit + (unpin && from !== to ? old.bytes : 0);
  const added = await store.add({ keyId, cid: to, ...(old.name === undefined ? {} : { name: old.name }), bytes: weighed.value, createdAt: deps.now() }, room);
  if (!added.ok) throw storageLimitReached(limit!, added.storedBytes, weighed.value);
  const moving = unpin && from !== to;
  // Moving takes the key's whole hold of `from`, as pin/rm does.
  const removed = moving ? await removeAll(store, keyId, from) : [];
  const others = moving && (await store.pinnedByOthers(keyId, from));
  const done = moving && !others ? await deps.node.update(ctx, from, to) : await deps.node.pin(ctx, to, old.name);
  if (!done.ok) {
    // Back to how it was: the old pins kept, the new one not recorded.
    for (const pin of removed) await store.add(pin, undefined);
    if (added.added) await store.remove(keyId, to);
    return done.reply;
  }
  return json({ Pins: [from, to] });
}

/**
 * Serves `pin/add`, `pin/ls`, `pin/rm` and `pin/update` from the key's own pins (`Tokens.PinStore`):
 * `pin/ls` lists the caller's pins only, each CID once however many pins (the file API's, Pinning Service
 * API requests) hold it, and by `type` what they pin indirectly; `pin/rm` and `pin/update` act on the caller's pins only, taking its whole hold of
 * the CID (its pin requests included), and the node unpins content only when no other key pins it; `pin/add` weighs the DAG (`dag/stat`) and records
 * the pin, within the plan's `storageBytes`, before the node pins it. Answers are kubo's (`{"Pins":[...]}`,
 * `{"Keys":{...}}`, its error bodies); the call then skips `dispatch`.
 */
export function pinsStage(settings: ResolvedIpfsSettings): StageDefinition {
  return {
    name: PINS_STAGE,
    after: 'route',
    create: (deps) => {
      let store: PinStore | undefined;
      const pinDeps: PinDeps = {
        // Store plugins replace the default before the gateway starts: resolved on first use.
        store: () => (store ??= deps.container.resolve(Tokens.PinStore)),
        node: new NodePinRequests(createUpstreamSender(deps)),
        settings,
        now: () => deps.clock.now(),
      };
      return step((ctx) => {
        if (!ctx.call.method.startsWith('pin/') || !isIpfsNetwork(ctx.network) || !ctx.state.has(IPFS_REQUEST) || ctx.reply !== undefined) return;
        const [args, options] = ctx.params as [string[], Record<string, string>];
        const answer = (reply: UpstreamReply): void => {
          ctx.reply = reply;
        };
        switch (ctx.call.method) {
          case 'pin/add': return pinAdd(ctx, pinDeps, args, options).then(answer);
          case 'pin/ls': return pinLs(ctx, pinDeps, args, options).then(answer);
          case 'pin/rm': return pinRm(ctx, pinDeps, args).then(answer);
          case 'pin/update': return pinUpdate(ctx, pinDeps, args, options).then(answer);
          default: throw new GatewayError(Errors.METHOD_NOT_FOUND);
        }
      });
    },
  };
}

