import type { CID } from 'multiformats/cid';
import { multiformatsCid } from './peers.js';

/** A content path argument: the root CID and the path inside it (`/ipfs/<cid>/a/b` or `<cid>/a/b`). */
export interface ContentPath {
  /** The root content id. */
  readonly cid: CID;
  /** Path segments below the root, each non-empty. */
  readonly segments: readonly string[];
}

/**
 * Parses an IPFS path argument as kubo's commands take it: `<cid>`, `<cid>/a/b`, `/ipfs/<cid>[/...]`.
 * Throws an `Error` whose message says what is wrong (`/ipns/` names are not served).
 */
export function parseContentPath(arg: string): ContentPath {
  let rest = arg;
  if (rest.startsWith('/ipfs/')) rest = rest.slice('/ipfs/'.length);
  else if (rest.startsWith('/ipns/')) throw new Error(`invalid path "${arg}": /ipns/ names are not served`);
  else if (rest.startsWith('/')) throw new Error(`invalid path "${arg}": not an /ipfs/ path`);
  const [root = '', ...segments] = rest.split('/');
  if (root === '') throw new Error(`invalid path "${arg}": no content id`);
  let cid: CID;
  try {
    cid = multiformatsCid.CID.parse(root);
  } catch (error) {
    throw new Error(`invalid path "${arg}": invalid cid: ${(error as Error).message}`, { cause: error });
  }
  return { cid, segments: segments.filter((s) => s !== '') };
}
