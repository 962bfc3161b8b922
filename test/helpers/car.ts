import { CarWriter } from '@ipld/car/writer';
import * as dagCbor from '@ipld/dag-cbor';
import { CID } from 'multiformats/cid';
import * as raw from 'multiformats/codecs/raw';
import { sha256 } from 'multiformats/hashes/sha2';

/** A raw block's CID (CIDv1, sha2-256), as kubo's `block/put` makes it. */
export async function rawCid(bytes: Uint8Array): Promise<CID> {
  return CID.createV1(raw.code, await sha256.digest(bytes));
}

/** A dag-cbor node, its bytes and CID (CIDv1, sha2-256). */
export async function cborNode(value: unknown): Promise<{ cid: CID; bytes: Uint8Array }> {
  const bytes = dagCbor.encode(value);
  return { cid: CID.createV1(dagCbor.code, await sha256.digest(bytes)), bytes };
}

/** A CAR (v1) with `roots` and the given blocks, in that order, as one buffer: what `dag/import` takes. */
export async function carOf(roots: readonly CID[], blocks: ReadonlyArray<{ cid: CID; bytes: Uint8Array }>): Promise<Buffer> {
  const { writer, out } = CarWriter.create([...roots]);
  const collected = (async () => {
    const chunks: Uint8Array[] = [];
    for await (const chunk of out) chunks.push(chunk);
    return Buffer.concat(chunks);
  })();
  for (const block of blocks) await writer.put(block);
  await writer.close();
  return collected;
}

/** A two-block DAG as a CAR: a raw `leaf` and a dag-cbor root made by `root` around the leaf's CID. */
export async function leafAndRootCar(leaf: Uint8Array, root: (leafCid: CID) => unknown): Promise<{ car: Buffer; leaf: Uint8Array; leafCid: CID; rootCid: CID; rootBytes: Uint8Array }> {
  const leafCid = await rawCid(leaf);
  const node = await cborNode(root(leafCid));
  return { car: await carOf([node.cid], [node, { cid: leafCid, bytes: leaf }]), leaf, leafCid, rootCid: node.cid, rootBytes: node.bytes };
}
