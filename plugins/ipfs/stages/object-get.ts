import { createUpstreamSender, type Upstream, type UpstreamSender } from '../../../core/upstream-api.js';
import { step, type RequestContext, type StageDefinition, type UpstreamReply, replyOf, servedByOf } from '../../../core/plugin-api.js';
import type { CID } from 'multiformats/cid';
import { parseContentPath } from '../content-path.js';
import { IPFS_REQUEST, OBJECT_FROM_BLOCK } from '../context-keys.js';
import { decodeDagPb, objectJson, type ObjectDataEncoding } from '../dag-pb-object.js';
import { isIpfsNetwork } from '../family.js';
import { isKuboError } from '../kubo-protocol.js';
import { kuboErrorMessage, kuboErrorReply } from '../kubo-errors.js';

/** The stage that sends `object/get` straight to `block/get` on an upstream known to lack the command; after `route`. */
export const OBJECT_GET_ROUTE_STAGE = 'ipfsObjectGetRoute';
/** The stage that serves `object/get` from the raw block when the upstream lacks the command; after `dispatch`. */
export const OBJECT_GET_FALLBACK_STAGE = 'ipfsObjectGetFallback';

const OBJECT_GET = 'object/get';
/** kubo 0.28 and later answer `object/*` with this error; older or other nodes may answer 404. */
const REMOVED = /\bremoved\b|unknown command|not (?:found|implemented)/i;

/** Whether an upstream's answer to `object/get` says it has no such command. */
export function lacksObjectGet(reply: UpstreamReply): boolean {
  if (reply.status === 404 || reply.status === 405 || reply.status === 501) return true;
  if (!isKuboError(reply) || !(reply.body instanceof Uint8Array)) return false;
  return REMOVED.test(kuboErrorMessage(reply.body) ?? '');
}

function argsOf(ctx: RequestContext): { arg: string; dataEncoding: ObjectDataEncoding } {
  const [args, options] = ctx.params as [string[], Record<string, string>];
  return { arg: args[0]!, dataEncoding: options['data-encoding'] === 'base64' ? 'base64' : 'text' };
}

function rendered(json: string): UpstreamReply {
  return { status: 200, headers: { 'content-type': 'application/json' }, body: Buffer.from(json) };
}

/** Fetches a raw block through the route, as every upstream request goes: selector, breakers, failover. */
async function getBlock(send: UpstreamSender, cid: CID, ctx: RequestContext): Promise<UpstreamReply> {
  const { reply } = await send(ctx, { path: `/api/v0/block/get?arg=${cid.toString()}`, stream: false });
  return reply;
}

/**
 * Resolves `arg` (a CID and a path below it) through dag-pb links, block by block, and renders the node
 * it names. `root` is the root's block when it was already fetched.
 */
async function fromBlocks(send: UpstreamSender, ctx: RequestContext, root?: UpstreamReply): Promise<UpstreamReply> {
  const { arg, dataEncoding } = argsOf(ctx);
  const { cid, segments } = parseContentPath(arg);
  let current = cid;
  let reply = root ?? (await getBlock(send, current, ctx));
  for (const segment of segments) {
    if (reply.status !== 200) return reply;
    let next: CID | undefined;
    try {
      next = decodeDagPb(current, reply.body as Uint8Array).Links.find((link) => link.Name === segment)?.Hash;
    } catch (error) {
      return kuboErrorReply((error as Error).message);
    }
    if (next === undefined) return kuboErrorReply(`no link named "${segment}" under ${current.toString()}`);
    current = next;
    reply = await getBlock(send, current, ctx);
  }
  if (reply.status !== 200) return reply;
  try {
    return rendered(objectJson(decodeDagPb(current, reply.body as Uint8Array), dataEncoding));
  } catch (error) {
    return kuboErrorReply((error as Error).message);
  }
}

/**
 * `object/get` against upstreams that lack it (kubo removed it in 0.28): when the upstream answers that
 * the command does not exist, the node is fetched as a raw block (`block/get`, following the path's
 * links) and rendered as kubo rendered it. Upstreams found lacking are remembered, and later calls go
 * to `block/get` directly. Every block is fetched through the call's route, under the same selector,
 * breakers and failover as `dispatch`. Returns the two stages (after `route`, after `dispatch`).
 */
export function objectGetStages(): StageDefinition[] {
  const lacking = new WeakSet<Upstream>();
  const applies = (ctx: RequestContext): boolean => ctx.call.method === OBJECT_GET && isIpfsNetwork(ctx.network) && ctx.state.has(IPFS_REQUEST);
  return [
    {
      name: OBJECT_GET_ROUTE_STAGE,
      after: 'route',
      create: () =>
        step((ctx) => {
          if (!applies(ctx)) return;
          const first = ctx.candidates?.[0];
          if (first !== undefined && lacking.has(first)) ctx.state.set(OBJECT_FROM_BLOCK, true);
        }),
    },
    {
      name: OBJECT_GET_FALLBACK_STAGE,
      after: 'dispatch',
      create: (deps) => {
        const send = createUpstreamSender(deps);
        return step((ctx) => {
          if (!applies(ctx)) return;
          const reply = replyOf(ctx);
          if (ctx.state.get(OBJECT_FROM_BLOCK) === true) {
            // The upstream was asked for the root's raw block: follow the path, render the node.
            if (reply.status !== 200) return;
            return fromBlocks(send, ctx, reply).then((answer) => {
              ctx.reply = answer;
            });
          }
          if (!lacksObjectGet(reply)) return;
          const upstream = servedByOf(ctx);
          lacking.add(upstream);
          return fromBlocks(send, ctx).then((answer) => {
            ctx.reply = answer;
          });
        });
      },
    },
  ];
}
