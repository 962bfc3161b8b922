import { randomUUID } from 'node:crypto';
import { createUpstreamSender } from '../../../core/upstream-api.js';
import { Errors, GatewayError, keyOf, step, Tokens, type RequestContext, type StageDefinition, type UpstreamReply } from '../../../core/plugin-api.js';
import { pinIdOf, type PinRecord, type PinStore } from '../../../core/store-api.js';
import { parseContentPath } from '../content-path.js';
import { isIpfsNetwork } from '../family.js';
import { NodePinRequests } from '../node-pins.js';
import type { ResolvedIpfsSettings } from '../settings.js';
import { storageLimitOf } from '../stages/pins.js';
import { storageLimitReached } from '../storage-limit.js';
import { PsaMethod, PSA_TRANSPORT, type PinObject, type PinQuery } from './methods.js';
import { PinJobs } from './pin-jobs.js';
import { pinStatusOf, selectPins } from './pin-status.js';

/** The stage that serves the Pinning Service API from the key's own pins; after `route` (the node requests use the call's route). */
export const PINNING_SERVICE_STAGE = 'ipfsPinningService';

/** What the operations need. */
interface Service {
  readonly store: () => PinStore;
  readonly jobs: PinJobs;
  readonly settings: ResolvedIpfsSettings;
  /** A `created` time for a new pin request: the clock's, made unique (the spec pages by it). */
  readonly created: () => number;
}

function json(status: number, value: unknown): UpstreamReply {
  return { status, headers: { 'content-type': 'application/json' }, body: Buffer.from(JSON.stringify(value)) };
}

/** The CID as the node names it (the form the key's pins are recorded under). */
function cidOf(cid: string): string {
  return parseContentPath(cid).cid.toString();
}

function notFound(requestId: string): GatewayError {
  return new GatewayError(Errors.NOT_FOUND, { message: `the key has no pin request ${requestId}` });
}

/** The key's pin answering to `requestId`: a pin request's id, or the CID of a pin the file API made. */
async function findPin(store: PinStore, keyId: string, requestId: string): Promise<PinRecord> {
  const byRequest = await store.get(keyId, requestId);
  if (byRequest !== undefined) return byRequest;
  let cid: string;
  try {
    cid = cidOf(requestId);
  } catch {
    throw notFound(requestId);
  }
  const pin = await store.get(keyId, cid);
  if (pin === undefined || pin.requestId !== undefined) throw notFound(requestId);
  return pin;
}

/** A new pin request's record: `queued`, weighing nothing until the node holds the content. */
function requestRecord(keyId: string, pin: PinObject, cid: string, createdAt: number): PinRecord {
  return {
    keyId,
    cid,
    ...(pin.name === undefined ? {} : { name: pin.name }),
    bytes: 0,
    createdAt,
    requestId: randomUUID(),
    status: 'queued',
    ...(pin.meta === undefined ? {} : { meta: pin.meta }),
    ...(pin.origins === undefined ? {} : { origins: pin.origins }),
  };
}

/**
 * Records a pin request and starts the node's work on it. Every request is a new one, a CID the key
 * already pins included (the spec: "a different requestid is returned to differentiate between those
 * pin requests"). A key whose pins already fill its allowance (`freed`: bytes a replaced pin gives back)
 * is refused at once; otherwise the exact weight is checked once the node holds the content.
 */
async function enqueue(ctx: RequestContext, service: Service, pin: PinObject, freed: number, replaces?: PinRecord): Promise<PinRecord> {
  const keyId = keyOf(ctx).id;
  const store = service.store();
  const cid = cidOf(pin.cid);
  const limit = storageLimitOf(ctx, service.settings);
  if (limit !== undefined) {
    const stored = (await store.storedBytes(keyId)) - freed;
    if (stored >= limit) throw storageLimitReached(limit, stored);
  }
  const record = requestRecord(keyId, pin, cid, service.created());
  await store.add(record, undefined);
  if (replaces !== undefined) await store.remove(keyId, pinIdOf(replaces));
  service.jobs.start(ctx, { keyId, pinId: record.requestId!, cid, ...(pin.name === undefined ? {} : { name: pin.name }), limitBytes: limit, ...(replaces === undefined ? {} : { replaces: replaces.cid }) });
  return record;
}

async function create(ctx: RequestContext, service: Service, pin: PinObject): Promise<UpstreamReply> {
  return json(202, pinStatusOf(await enqueue(ctx, service, pin, 0), service.settings.pinningService.delegates));
}

async function list(ctx: RequestContext, service: Service, query: PinQuery): Promise<UpstreamReply> {
  const pins = await service.store().list(keyOf(ctx).id);
  const wanted: PinQuery = query.cid === undefined ? query : { ...query, cid: query.cid.map(cidOf) };
  const { count, results } = selectPins(pins, wanted);
  return json(200, { count, results: results.map((pin) => pinStatusOf(pin, service.settings.pinningService.delegates)) });
}

async function get(ctx: RequestContext, service: Service, requestId: string): Promise<UpstreamReply> {
  return json(200, pinStatusOf(await findPin(service.store(), keyOf(ctx).id, requestId), service.settings.pinningService.delegates));
}

async function replace(ctx: RequestContext, service: Service, requestId: string, pin: PinObject): Promise<UpstreamReply> {
  const keyId = keyOf(ctx).id;
  const store = service.store();
  const old = await findPin(store, keyId, requestId);
  const delegates = service.settings.pinningService.delegates;
  if (cidOf(pin.cid) !== old.cid) return json(202, pinStatusOf(await enqueue(ctx, service, pin, old.bytes, old), delegates));
  // The same content: a new request for it, with the new name and metadata; a pinned one stays pinned.
  if (old.status !== undefined && old.status !== 'pinned') {
    await store.remove(keyId, pinIdOf(old));
    return json(202, pinStatusOf(await enqueue(ctx, service, pin, 0), delegates));
  }
  // Recorded before the old one goes, so the key never stops holding the content.
  const renewed: PinRecord = { ...requestRecord(keyId, pin, old.cid, service.created()), bytes: old.bytes, status: 'pinned' };
  await store.add(renewed, undefined);
  await store.remove(keyId, pinIdOf(old));
  return json(202, pinStatusOf(renewed, delegates));
}

async function remove(ctx: RequestContext, service: Service, requestId: string): Promise<UpstreamReply> {
  const keyId = keyOf(ctx).id;
  const store = service.store();
  const pin = await findPin(store, keyId, requestId);
  // This request only: the key's other requests for the CID stay, and hold the content on the node.
  await store.remove(keyId, pinIdOf(pin));
  // A pin the node is still working on is released by its job, once the node is done.
  if (pin.status !== 'queued' && pin.status !== 'pinning') await service.jobs.release(ctx, keyId, pin.cid);
  return { status: 202, headers: {}, body: new Uint8Array() };
}

/**
 * Serves the Pinning Service API (`psa/*` methods, from its transport) from the key's own pins
 * (`Tokens.PinStore`): a pin request is recorded as the caller's pin, `queued`, and the node pins it in
 * the background (see {@link PinJobs}); list, get, replace and delete see the caller's pins only (the
 * file API's pins too, named by their CID). The answer is the spec's JSON, so the call skips `dispatch`.
 */
export function pinningServiceStage(settings: ResolvedIpfsSettings): StageDefinition & { readonly jobs: () => PinJobs | undefined } {
  let jobs: PinJobs | undefined;
  return {
    name: PINNING_SERVICE_STAGE,
    after: 'route',
    transports: [PSA_TRANSPORT],
    jobs: () => jobs,
    create: (deps) => {
      let store: PinStore | undefined;
      let last = 0;
      const service: Service = {
        // Store plugins replace the default before the gateway starts: resolved on first use.
        store: () => (store ??= deps.container.resolve(Tokens.PinStore)),
        jobs: (jobs = new PinJobs({
          store: () => (store ??= deps.container.resolve(Tokens.PinStore)),
          node: new NodePinRequests(createUpstreamSender(deps)),
          pinTimeoutMs: settings.pinningService.pinTimeoutMs,
          logger: deps.logger,
        })),
        settings,
        created: () => (last = Math.max(deps.clock.now(), last + 1)),
      };
      return step((ctx) => {
        if (!isIpfsNetwork(ctx.network) || ctx.reply !== undefined) return;
        const params = ctx.params as readonly unknown[];
        const answer = (reply: UpstreamReply): void => {
          ctx.reply = reply;
        };
        // The key's requests a gateway left unfinished are taken up on its first call here since start.
        void service.jobs.resume(ctx, keyOf(ctx).id, storageLimitOf(ctx, settings)).catch((error: unknown) => deps.logger.warn({ call: ctx.id, err: error }, 'unfinished pin requests could not be read'));
        switch (ctx.call.method) {
          case PsaMethod.create: return create(ctx, service, params[0] as PinObject).then(answer);
          case PsaMethod.list: return list(ctx, service, params[0] as PinQuery).then(answer);
          case PsaMethod.get: return get(ctx, service, params[0] as string).then(answer);
          case PsaMethod.replace: return replace(ctx, service, params[0] as string, params[1] as PinObject).then(answer);
          case PsaMethod.delete: return remove(ctx, service, params[0] as string).then(answer);
          default: throw new GatewayError(Errors.METHOD_NOT_FOUND);
        }
      });
    },
  };
}
