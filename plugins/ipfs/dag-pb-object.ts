import type { PBNode } from '@ipld/dag-pb';
import type { CID } from 'multiformats/cid';
import { goJsonString } from './go-json.js';
import { dagPb } from './peers.js';

/** How `object/get` renders a node's data: `text` (a Go string, kubo's default) or `base64`. */
export type ObjectDataEncoding = 'text' | 'base64';

/** The multicodec code of dag-pb (0x70), the only codec `object/get` reads. */
export const DAG_PB_CODE: number = dagPb.code;

/** The message kubo gives when `object/get` meets a block that is not dag-pb. */
export const NOT_PROTOBUF = 'expected protobuf dag node';

/** Decodes a dag-pb block; throws an `Error` with kubo's message when it is not one. */
export function decodeDagPb(cid: CID, block: Uint8Array): PBNode {
  if (cid.code !== DAG_PB_CODE) throw new Error(NOT_PROTOBUF);
  try {
    return dagPb.decode(block);
  } catch (error) {
    throw new Error(`${NOT_PROTOBUF}: ${(error as Error).message}`, { cause: error });
  }
}

/**
 * Renders a dag-pb node as kubo's `object/get` answered it (until kubo 0.28 removed the command):
 * `{"Links":[{"Name","Hash","Size"}],"Data":...}` and a newline, byte for byte as Go's JSON encoder
 * writes it.
 *
 * @example
 * ```ts
 * objectJson(decodeDagPb(cid, block), 'base64'); // '{"Links":[],"Data":"CAISCkhlbGxvIE1hcnMYCg=="}\n'
 * ```
 */
export function objectJson(node: PBNode, dataEncoding: ObjectDataEncoding): string {
  const links = node.Links.map((link) => `{"Name":${goJsonString(Buffer.from(link.Name ?? '', 'utf8'))},"Hash":"${link.Hash.toString()}","Size":${link.Tsize ?? 0}}`);
  const data = node.Data ?? new Uint8Array(0);
  const rendered = dataEncoding === 'base64' ? `"${Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString('base64')}"` : goJsonString(data);
  return `{"Links":[${links.join(',')}],"Data":${rendered}}\n`;
}
