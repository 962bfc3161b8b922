import t from 'tap';
import { CarSections } from '../plugins/ipfs/car-sections.js';
import { MultipartParts } from '../plugins/ipfs/multipart-parts.js';
import { multipartBoundary } from '../plugins/ipfs/upload-blocks.js';
import { carOf, rawCid } from './helpers/car.js';

// The counters behind maxBlocksPerUpload see bytes as the network delivers them: in any split. Each
// input is fed whole, byte by byte, and in seeded random splits, and must count the same.

/** `bytes` cut at seeded random points (and whole, and byte by byte). */
function splits(bytes: Buffer, seed: number): Buffer[][] {
  let state = seed;
  const random = (): number => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  const random3 = Array.from({ length: 3 }, () => {
    const pieces: Buffer[] = [];
    for (let at = 0; at < bytes.length; ) {
      const size = 1 + Math.floor(random() * 97);
      pieces.push(bytes.subarray(at, at + size));
      at += size;
    }
    return pieces;
  });
  return [[bytes], Array.from(bytes, (_, i) => bytes.subarray(i, i + 1)), ...random3];
}

async function blocksOf(n: number): Promise<Array<{ cid: Awaited<ReturnType<typeof rawCid>>; bytes: Uint8Array }>> {
  return Promise.all(Array.from({ length: n }, async (_, i) => {
    const bytes = new TextEncoder().encode(`block ${i} `.repeat(i * 7 + 1));
    return { cid: await rawCid(bytes), bytes };
  }));
}

/** A CARv2 around `v1`: the pragma, the fixed header pointing at the payload after 5 bytes of padding, and an index after it. */
function carV2(v1: Buffer): Buffer {
  const pragma = Buffer.from([0x0a, 0xa1, 0x67, ...Buffer.from('version'), 0x02]);
  const header = Buffer.alloc(40);
  const dataOffset = pragma.length + header.length + 5;
  header.writeBigUInt64LE(BigInt(dataOffset), 16);
  header.writeBigUInt64LE(BigInt(v1.length), 24);
  header.writeBigUInt64LE(BigInt(dataOffset + v1.length), 32);
  // An index holds no blocks, yet its bytes would read as sections to a CARv1 reader.
  const index = Buffer.from([0x80, 0x04, 0x01, 0x05, 0x05, 0x05, 0x05, 0x05]);
  return Buffer.concat([pragma, header, Buffer.alloc(5), v1, index]);
}

t.test('CAR sections: a CARv1 and a CARv2 count their blocks in any split; the header and the index are not blocks', async (t) => {
  for (const n of [0, 1, 5]) {
    const blocks = await blocksOf(n);
    const v1 = await carOf(n === 0 ? [] : [blocks[0]!.cid], blocks);
    for (const [name, car] of [['CARv1', v1], ['CARv2', carV2(v1)]] as const) {
      const counted = splits(car, n + 1).map((pieces) => {
        const sections = new CarSections();
        for (const piece of pieces) sections.push(piece);
        return [sections.blocks, sections.malformed];
      });
      t.same(new Set(counted.map((c) => JSON.stringify(c))), new Set([JSON.stringify([n, false])]), `${name} of ${n} blocks: ${n} in every split`);
    }
  }
  const endless = new CarSections();
  endless.push(Buffer.from([0x01, 0x00, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]));
  t.equal(endless.malformed, true, 'a varint longer than any length is malformed');
});

t.test('multipart parts: counted, and each part\'s body handed on exactly, in any split', async (t) => {
  const boundary = 'x-tollgate-Boundary-7';
  const bodies = [Buffer.from('first'), Buffer.alloc(0), Buffer.from(`\r\n--x-tollgate-Boundar\r\n--${'y'.repeat(30)}`), Buffer.from('last\r\n')];
  const form = Buffer.concat([
    Buffer.from('a preamble that is ignored\r\n'),
    ...bodies.flatMap((body, i) => [Buffer.from(`--${boundary}  \r\nContent-Disposition: form-data; name="file${i}"\r\n\r\n`), body, Buffer.from('\r\n')]),
    Buffer.from(`--${boundary}--\r\nan epilogue\r\n--${boundary}\r\n\r\nnot a part`),
  ]);
  for (const pieces of splits(form, 7)) {
    const seen: Buffer[][] = [];
    const parts = new MultipartParts(boundary, () => seen.push([]), (bytes) => seen.at(-1)!.push(Buffer.from(bytes)));
    for (const piece of pieces) parts.push(piece);
    t.equal(parts.parts, 4, `4 parts in ${pieces.length} pieces`);
    t.same(seen.map((chunks) => Buffer.concat(chunks).toString('latin1')), bodies.map((b) => b.toString('latin1')), 'each body exact, the epilogue ignored');
    t.equal(parts.malformed, false);
  }
  const noBlankLine = new MultipartParts(boundary, () => t.fail('no part'), () => t.fail('no body'));
  noBlankLine.push(Buffer.concat([Buffer.from(`--${boundary}\r\n`), Buffer.alloc(20_000, 0x61)]));
  t.equal(noBlankLine.malformed, true, 'headers that never end are malformed');
});

t.test('the boundary of a multipart content type', async (t) => {
  t.equal(multipartBoundary('multipart/form-data; boundary=abc-1'), 'abc-1');
  t.equal(multipartBoundary('Multipart/Form-Data; charset=utf-8; boundary="a b c"'), 'a b c');
  t.equal(multipartBoundary('application/octet-stream; boundary=abc'), undefined);
  t.equal(multipartBoundary('multipart/form-data'), undefined);
  t.equal(multipartBoundary(undefined), undefined);
});
