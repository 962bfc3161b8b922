import { PassThrough, Readable } from 'node:stream';
import { createUpstreamSender } from '../../../core/upstream-api.js';
import { ContextKey, keyOf, replyOf, step, Tokens, type GatewayError, type RequestContext, type StageDefinition, type UpstreamReply } from '../../../core/plugin-api.js';
import type { PinStore } from '../../../core/store-api.js';
import { ipfsCommand, takesUpload } from '../commands.js';
import { IPFS_REQUEST } from '../context-keys.js';
import { isIpfsNetwork } from '../family.js';
import { kuboErrorMessage, kuboErrorReply } from '../kubo-errors.js';
import { NodePinRequests } from '../node-pins.js';
import type { ResolvedIpfsSettings } from '../settings.js';
import { storageLimitReached } from '../storage-limit.js';
import { flag, storageLimitOf } from './pins.js';
import { boundUpload, UPLOAD_FRAMING_BYTES, type BoundedUpload } from '../upload-bound.js';

/** The stage that refuses an `add` of a key already at its storage allowance, before the upload is read; after `route`. */
export const ADD_QUOTA_STAGE = 'ipfsAddQuota';
/** The stage that records what an `add` pinned as the key's own, with its size; after `dispatch`. */
export const ADD_PINS_STAGE = 'ipfsAddPins';

/** The uploads whose answers name what they pinned: `add`, and `block/put`, `dag/put` (with `pin`) and `dag/import` (its roots). */
type PinningUpload = 'add' | 'block/put' | 'dag/put' | 'dag/import';

/** How the client asked the upload to answer, when the gateway asked the node for every line (it needs the roots). */
interface AddOutput {
  readonly command: PinningUpload;
  readonly quieter: boolean;
  readonly silent: boolean;
  readonly wrapped: boolean;
}

/** Set by the quota stage on an `add` that pins: the gateway records its roots after `dispatch`. */
const ADD_OUTPUT = new ContextKey<AddOutput>('ipfs.addOutput');

/** Set by the quota stage on an `add` of a key with a storage allowance: the upload, bounded by what is left of it. */
const ADD_UPLOAD = new ContextKey<{ readonly upload: BoundedUpload; readonly limit: number; readonly stored: number }>('ipfs.addUpload');

/**
 * One line of an upload's answer: `add`'s file or directory (`Hash`) or progress event (`Bytes`),
 * `block/put`'s `{Key,Size}`, `dag/put`'s `{Cid}`, `dag/import`'s `{Root}` or `{Stats}`.
 */
interface AddLine {
  readonly Name?: string;
  readonly Hash?: string;
  readonly Size?: string | number;
  readonly Key?: string;
  readonly Cid?: { readonly '/'?: string };
  readonly Root?: { readonly Cid?: { readonly '/'?: string }; readonly PinErrorMsg?: string };
}

/** What an upload pinned, as the key's pin: its CID, a name, its bytes when the answer gives them (else the node weighs it). */
interface UploadRoot {
  readonly cid: string;
  readonly name?: string;
  readonly bytes?: number;
}

/** The pin a line of the answer reports, if any. */
function rootOf(output: AddOutput, line: AddLine): UploadRoot | undefined {
  switch (output.command) {
    case 'add': {
      if (line.Hash === undefined || !isRoot(line, output.wrapped)) return undefined;
      const name = line.Name === undefined || line.Name === '' || line.Name === line.Hash ? undefined : line.Name;
      return { cid: line.Hash, ...(name === undefined ? {} : { name }), bytes: Number(line.Size ?? 0) };
    }
    case 'block/put':
      return line.Key === undefined ? undefined : { cid: line.Key, bytes: Number(line.Size ?? 0) };
    case 'dag/put':
      return line.Cid?.['/'] === undefined ? undefined : { cid: line.Cid['/'] };
    default: {
      // A root whose DAG is not whole is not pinned (its PinErrorMsg says why).
      const cid = line.Root?.Cid?.['/'];
      return cid === undefined || (line.Root?.PinErrorMsg ?? '') !== '' ? undefined : { cid };
    }
  }
}

/** What `add` pinned: the wrapping directory, else each top-level file or directory (kubo's rule). */
function isRoot(line: AddLine, wrapped: boolean): boolean {
  const name = line.Name ?? '';
  return wrapped ? name === '' : !name.includes('/');
}

async function* lines(body: NodeJS.ReadableStream): AsyncGenerator<string> {
  let rest = '';
  for await (const chunk of body as AsyncIterable<Buffer | string>) {
    rest += typeof chunk === 'string' ? chunk : chunk.toString('utf8');
    let end: number;
    while ((end = rest.indexOf('\n')) !== -1) {
      yield rest.slice(0, end + 1);
      rest = rest.slice(end + 1);
    }
  }
  if (rest !== '') yield `${rest}\n`;
}

function parsed(line: string): AddLine {
  try {
    return JSON.parse(line) as AddLine;
  } catch {
    return {};
  }
}

function kuboMessage(reply: UpstreamReply): string | undefined {
  return reply.body instanceof Uint8Array ? kuboErrorMessage(reply.body) : undefined;
}

function streamError(reply: UpstreamReply): string | undefined {
  const sent = reply.trailers?.['x-stream-error'];
  const message = Array.isArray(sent) ? sent[0] : sent;
  return message === undefined || message === '' ? undefined : message;
}

/** Has the node unpin `cids` where neither the key nor another key pins them (what a refused add alone pinned). */
async function unpinUnowned(ctx: RequestContext, store: PinStore, node: NodePinRequests, cids: readonly string[]): Promise<void> {
  const keyId = keyOf(ctx).id;
  for (const cid of cids) {
    if ((await store.pinsOf(keyId, cid)).some((pin) => pin.status !== 'failed') || (await store.pinnedByOthers(keyId, cid))) continue;
    await node.unpin(ctx, cid);
  }
}

/**
 * Records the roots of an upload as the key's pins (weighing with `dag/stat` those whose size the answer
 * does not give); on a refusal, undoes this upload's records and node pins, and returns the error; a
 * node's failure to weigh one is returned as its message.
 */
async function record(ctx: RequestContext, store: PinStore, node: NodePinRequests, limit: number | undefined, roots: readonly UploadRoot[], now: number): Promise<GatewayError | string | undefined> {
  const keyId = keyOf(ctx).id;
  const added: string[] = [];
  for (const root of roots) {
    const { cid, name } = root;
    let bytes = root.bytes;
    if (bytes === undefined) {
      const weighed = await node.dagBytes(ctx, cid);
      if (!weighed.ok) return kuboMessage(weighed.reply) ?? `the node could not weigh ${cid}`;
      bytes = weighed.value;
    }
    const outcome = await store.add({ keyId, cid, ...(name === undefined ? {} : { name }), bytes, createdAt: now }, limit);
    if (outcome.ok) {
      if (outcome.added) added.push(cid);
      continue;
    }
    // The node pinned the whole add: what this add alone pins there is unpinned again.
    for (const cid of added) await store.remove(keyId, cid);
    await unpinUnowned(ctx, store, node, [...added, ...roots.slice(roots.indexOf(root)).map((r) => r.cid)]);
    return storageLimitReached(limit!, outcome.storedBytes, bytes);
  }
  return undefined;
}

/**
 * `add` within the plan's `storageBytes`, its pins the key's own. Before `dispatch`: a key whose pins
 * already fill its allowance is refused before its upload is read, and the node is asked for every line of
 * the answer (`quieter` and `silent` are applied by the gateway), since the roots are what gets recorded.
 * After: each root (the wrapping directory, else each top-level entry) is recorded with its DAG size, the
 * allowance checked atomically; an add that would pass it is undone (its new pins removed from the node
 * unless another key pins the same content) and refused. The answer is held until then, so a refusal is
 * kubo's error answer (HTTP 402); with `progress=true` progress events flow at once, and a refusal comes
 * in the `X-Stream-Error` trailer.
 */
export function addPinsStages(settings: ResolvedIpfsSettings): StageDefinition[] {
  let store: PinStore | undefined;
  return [
    {
      name: ADD_QUOTA_STAGE,
      after: 'route',
      create: (deps) => {
        const pins = (): PinStore => (store ??= deps.container.resolve(Tokens.PinStore));
        // A key whose pins fill its allowance stores nothing more (an unpinned add, block/put, dag/put,
        // dag/import): refused before the upload is read.
        const refuseWhenFull = (ctx: RequestContext): Promise<void> | undefined => {
          const limit = storageLimitOf(ctx, settings);
          if (limit === undefined) return undefined;
          return Promise.resolve(pins().storedBytes(keyOf(ctx).id)).then((stored) => {
            if (stored >= limit) throw storageLimitReached(limit, stored);
          });
        };
        return step((ctx) => {
          if (ctx.reply !== undefined || !isIpfsNetwork(ctx.network) || !ctx.state.has(IPFS_REQUEST)) return;
          const [args, options] = ctx.params as [string[], Record<string, string>];
          const method = ctx.call.method;
          if (method === 'block/put' || method === 'dag/put' || method === 'dag/import') {
            const pins = method === 'dag/import' ? flag(options, ['pin-roots'], true) && !flag(options, ['local-only'], false) : flag(options, ['pin'], false);
            if (pins) ctx.state.set(ADD_OUTPUT, { command: method, quieter: false, silent: false, wrapped: false });
          }
          if (method !== 'add') return takesUpload(ipfsCommand(method)) ? refuseWhenFull(ctx) : undefined;
          if (flag(options, ['only-hash', 'n'], false)) return;
          if (!flag(options, ['pin'], true)) return refuseWhenFull(ctx);
          const output: AddOutput = { command: 'add', quieter: flag(options, ['quieter', 'Q'], false), silent: flag(options, ['silent'], false), wrapped: flag(options, ['wrap-with-directory', 'w'], false) };
          const { quieter: _q, Q: _Q, silent: _s, ...rest } = options;
          ctx.params = [args, rest];
          ctx.rewritten = true;
          ctx.state.set(ADD_OUTPUT, output);
          const limit = storageLimitOf(ctx, settings);
          if (limit === undefined) return;
          return Promise.resolve(pins().storedBytes(keyOf(ctx).id)).then((stored) => {
            if (stored >= limit) throw storageLimitReached(limit, stored);
            const request = ctx.state.get(IPFS_REQUEST);
            if (request?.body === undefined) return;
            // An upload that cannot fit is cut long before its end, not stored whole and then refused.
            const upload = boundUpload(request.body, limit - stored + UPLOAD_FRAMING_BYTES);
            ctx.state.replace(IPFS_REQUEST, { ...request, body: upload.body });
            ctx.state.set(ADD_UPLOAD, { upload, limit, stored });
          });
        });
      },
    },
    {
      name: ADD_PINS_STAGE,
      after: 'dispatch',
      create: (deps) => {
        const pins = (): PinStore => (store ??= deps.container.resolve(Tokens.PinStore));
        const node = new NodePinRequests(createUpstreamSender(deps));
        return step((ctx) => {
          const output = ctx.state.get(ADD_OUTPUT);
          if (output === undefined || !isIpfsNetwork(ctx.network)) return;
          const reply = replyOf(ctx);
          const bounded = ctx.state.get(ADD_UPLOAD);
          const cut = (): GatewayError | undefined => (bounded?.upload.exceeded() === true ? storageLimitReached(bounded.limit, bounded.stored) : undefined);
          if (reply.status !== 200) {
            // The node refused the truncated upload: the refusal is the allowance's, not the node's.
            const refusal = cut();
            if (refusal === undefined) return;
            (reply.body as { destroy?: () => void }).destroy?.();
            throw refusal;
          }
          const limit = storageLimitOf(ctx, settings);
          const entries: string[] = [];
          const roots: UploadRoot[] = [];
          const shown = (): string => (output.silent ? '' : output.quieter ? entries.slice(-1).join('') : entries.join(''));
          const collect = async (onProgress?: (line: string) => void): Promise<GatewayError | string | undefined> => {
            const body = reply.body instanceof Uint8Array ? Readable.from([Buffer.from(reply.body)]) : reply.body;
            for await (const line of lines(body)) {
              const entry = parsed(line);
              if (output.command === 'add' && entry.Hash === undefined) {
                onProgress?.(line);
                continue;
              }
              entries.push(line);
              const root = rootOf(output, entry);
              if (root !== undefined) roots.push(root);
            }
            const failed = streamError(reply);
            if (failed !== undefined) return cut() ?? failed;
            const refusal = cut();
            if (refusal !== undefined) {
              // A node that took the truncated upload as whole: what it pinned is not the key's.
              await unpinUnowned(ctx, pins(), node, roots.map((r) => r.cid));
              return refusal;
            }
            return record(ctx, pins(), node, limit, roots, deps.clock.now());
          };
          const { trailers: _trailers, ...head } = reply;
          if (output.command !== 'add' || !flag((ctx.params as [string[], Record<string, string>])[1], ['progress', 'p'], false)) {
            return collect().then((outcome) => {
              if (typeof outcome === 'string') ctx.reply = kuboErrorReply(outcome);
              else if (outcome !== undefined) throw outcome;
              // Still a stream, so the answer keeps kubo's chunked form and its `Trailer: X-Stream-Error`.
              else ctx.reply = { ...head, body: Readable.from([Buffer.from(shown())]) };
            });
          }
          // Progress events keep a long upload's client informed: they pass at once, the entries at the end.
          const out = new PassThrough();
          ctx.reply = { ...head, body: out };
          // A client that goes away ends the node's answer too, as the relay would have.
          out.once('close', () => {
            if (!out.writableFinished) (reply.body as { destroy?: () => void }).destroy?.();
          });
          collect((line) => out.write(line)).then(
            (outcome) => {
              if (outcome === undefined) out.end(shown());
              else out.destroy(new Error(typeof outcome === 'string' ? outcome : outcome.message));
            },
            (error: unknown) => out.destroy(error instanceof Error ? error : new Error(String(error))),
          );
        });
      },
    },
  ];
}
