// The answer scanner against JSON.parse: on every answer of the execution-apis fixtures, on random JSON
// from a seeded generator (nesting, escapes, unicode, numbers of every form, space, duplicate and escaped
// names, member orders), and on those bytes truncated and mutated. For every document, each member the
// scanner finds is the one JSON.parse finds, or the scanner declines and the view parses. On bytes
// JSON.parse refuses, the scanner declines, but for its one documented blind spot: a raw control
// character inside a string (the bytes are then JSON once control characters are spaces).
import t, { type Test } from 'tap';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { MemberScan } from '../core/jsonrpc/member-scan.js';
import { answerView } from '../core/family-api.js';
import { conformanceDir } from './helpers/fixtures.js';

const SEED = Number(process.env.ANSWER_SCAN_SEED ?? 0x5eed34);
const DOCUMENTS = 2000;

/** mulberry32: a small seeded PRNG, so a failure is replayed with the seed it prints. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Names drawn for members: answer members, repeats (duplicates), an escaped `number`, unicode, the empty name, `__proto__`. */
const NAMES = ['result', 'error', 'number', 'context', 'slot', 'value', 'id', 'a', 'b', '__proto__', '', 'é', '😀', 'n\\u0075mber', 'na\\"me', 'x\\\\y', 'tab\\t'];
const CHARS = ['a', 'Z', '0', ' ', '/', '\\/', '\\"', '\\\\', '\\n', '\\t', '\\b', '\\f', '\\r', '\\u0041', '\\u00e9', '\\ud83d\\ude00', '\\ud800', 'é', 'ß', '中', '😀', '\u2028', ',', ':', '{', '}', '[', ']'];

class Generator {
  constructor(readonly random: () => number) {}

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)]!;
  }

  space(): string {
    return this.random() < 0.7 ? '' : Array.from({ length: 1 + Math.floor(this.random() * 3) }, () => this.pick([' ', '\t', '\n', '\r'])).join('');
  }

  string(): string {
    if (this.random() < 0.3) return `"0x${Array.from({ length: Math.floor(this.random() * 66) }, () => this.pick([...'0123456789abcdef'])).join('')}"`;
    return `"${Array.from({ length: Math.floor(this.random() * 12) }, () => this.pick(CHARS)).join('')}"`;
  }

  number(): string {
    const sign = this.random() < 0.3 ? '-' : '';
    const integer = this.random() < 0.2 ? '0' : `${1 + Math.floor(this.random() * 9)}${Array.from({ length: Math.floor(this.random() * (this.random() < 0.1 ? 30 : 6)) }, () => Math.floor(this.random() * 10)).join('')}`;
    const fraction = this.random() < 0.3 ? `.${Math.floor(this.random() * 1e6)}` : '';
    const exponent = this.random() < 0.2 ? `${this.pick(['e', 'E'])}${this.pick(['', '+', '-'])}${Math.floor(this.random() * 40)}` : '';
    return `${sign}${integer}${fraction}${exponent}`;
  }

  value(depth: number): string {
    const roll = this.random();
    if (depth < 5 && roll < 0.3) return this.object(depth + 1, []);
    if (depth < 5 && roll < 0.45) {
      const items = Array.from({ length: Math.floor(this.random() * 5) }, () => `${this.space()}${this.value(depth + 1)}${this.space()}`);
      return `[${items.join(',') || this.space()}]`;
    }
    if (roll < 0.7) return this.string();
    if (roll < 0.9) return this.number();
    return this.pick(['true', 'false', 'null']);
  }

  object(depth: number, required: readonly (readonly [string, string])[]): string {
    const members: (readonly [string, string])[] = [...required];
    const count = Math.floor(this.random() * 6);
    for (let i = 0; i < count; i++) members.push([this.pick(NAMES), this.value(depth)]);
    // Member order shuffled; a required member may end up before or after a duplicate of its name.
    for (let i = members.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
    const text = members.map(([name, value]) => `${this.space()}"${name}"${this.space()}:${this.space()}${value}${this.space()}`).join(',');
    return `{${text || this.space()}}`;
  }

  /** A document: an answer-shaped object most of the time (a block, a context), else any value. */
  document(): string {
    const roll = this.random();
    let body: string;
    if (roll < 0.3) {
      const block = this.object(2, [['number', this.random() < 0.8 ? `"0x${Math.floor(this.random() * 1e8).toString(16)}"` : this.value(3)], ['transactions', `[${Array.from({ length: Math.floor(this.random() * 20) }, () => this.string()).join(',')}]`]]);
      body = this.object(1, [['jsonrpc', '"2.0"'], ['id', this.number()], ['result', block]]);
    } else if (roll < 0.5) {
      const context = this.object(3, [['slot', this.random() < 0.8 ? String(Math.floor(this.random() * 1e9)) : this.value(4)]]);
      body = this.object(1, [['jsonrpc', '"2.0"'], ['id', this.number()], ['result', this.object(2, [['context', context], ['value', this.value(3)]])]]);
    } else if (roll < 0.6) {
      body = this.object(1, [['jsonrpc', '"2.0"'], ['id', this.number()], ['error', this.object(2, [['code', '-32000'], ['message', this.string()]])]]);
    } else if (roll < 0.95) body = this.object(0, []);
    else body = this.value(0);
    return `${this.space()}${body}${this.space()}`;
  }

  /** The bytes with one to three bytes replaced, inserted or removed. */
  mutate(bytes: Buffer): Buffer {
    const pool = [0x22, 0x5c, 0x7b, 0x7d, 0x5b, 0x5d, 0x2c, 0x3a, 0x20, 0x0a, 0x09, 0x00, 0x01, 0x1f, 0x30, 0x35, 0x2d, 0x2b, 0x2e, 0x65, 0x61, 0x75, 0x6e, 0x74, 0x80, 0xc3, 0xe2, 0xff];
    let out = bytes;
    const times = 1 + Math.floor(this.random() * 3);
    for (let k = 0; k < times; k++) {
      const at = Math.floor(this.random() * (out.length + 1));
      const byte = this.pick(pool);
      const how = this.random();
      if (how < 0.4 && at < out.length) out = Buffer.concat([out.subarray(0, at), Buffer.of(byte), out.subarray(at + 1)]);
      else if (how < 0.7) out = Buffer.concat([out.subarray(0, at), Buffer.of(byte), out.subarray(at)]);
      else out = Buffer.concat([out.subarray(0, at), out.subarray(at + 1)]);
    }
    return out;
  }
}

function parse(bytes: Buffer): { readonly value: unknown } | undefined {
  try {
    return { value: JSON.parse(bytes.toString('utf8')) as unknown };
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function memberOf(document: unknown, path: readonly string[]): unknown {
  let value = document;
  for (const name of path) {
    if (!isObject(value) || !Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}

/** The paths to ask about: every member path of the parsed document (down to 4 levels), and absent names beside them. */
function pathsOf(document: unknown): string[][] {
  const paths: string[][] = [[], ['result'], ['error'], ['result', 'number'], ['result', 'context', 'slot'], ['missing'], ['result', 'missing', 'deeper']];
  const visit = (value: unknown, path: string[]): void => {
    if (!isObject(value) || path.length >= 4) return;
    for (const name of Object.keys(value)) {
      paths.push([...path, name]);
      visit(value[name], [...path, name]);
    }
    paths.push([...path, 'number'], [...path, 'n\u0000']);
  };
  visit(document, []);
  return paths;
}

interface Tally {
  documents: number;
  declined: number;
  refused: number;
}

/**
 * Checks the scanner and the view on `bytes` against JSON.parse. `valid` says the bytes were generated
 * as JSON, so the scanner must not decline them.
 */
function check(t: Test, bytes: Buffer, label: string, tally: Tally, valid = false, originalPaths: readonly string[][] = []): void {
  const parsed = parse(bytes);
  const scan = new MemberScan(bytes);
  const root = scan.find([]);
  tally.documents++;
  const where = `${label} (seed ${SEED}): ${JSON.stringify(bytes.toString('latin1').slice(0, 300))}`;
  checkUpToMember(t, bytes, parsed, parsed === undefined ? originalPaths : pathsOf(parsed.value), where);
  if (parsed === undefined) {
    tally.refused++;
    if (root !== undefined) {
      // The blind spot, and nothing else: with control characters as spaces, the bytes are JSON.
      if (parse(spaced(bytes)) === undefined) t.fail(`the scanner read bytes JSON.parse refuses: ${where}`);
    }
    if (answerView(bytes, { scan: true }).kind !== 'not-json' && root === undefined) t.fail(`the view of bytes that are not JSON says JSON: ${where}`);
    return;
  }
  if (root === undefined) {
    tally.declined++;
    if (valid) t.fail(`the scanner declined JSON: ${where}`);
  }
  const view = answerView(bytes, { scan: true });
  const parsedView = answerView(bytes, { scan: false });
  for (const path of pathsOf(parsed.value)) {
    const expected = memberOf(parsed.value, path);
    const scanned = scan.value(path);
    if (scanned !== undefined && !isDeepStrictEqual(scanned.value, expected)) t.fail(`member ${JSON.stringify(path)}: scanned ${JSON.stringify(scanned.value)}, JSON.parse ${JSON.stringify(expected)}: ${where}`);
    if (!isDeepStrictEqual(view.member(...path), expected)) t.fail(`view member ${JSON.stringify(path)} differs from JSON.parse: ${where}`);
    const length = scan.length(path);
    const expectedLength = Array.isArray(expected) ? expected.length : undefined;
    if (length !== undefined && length.length !== expectedLength) t.fail(`length ${JSON.stringify(path)}: scanned ${length.length}, JSON.parse ${expectedLength}: ${where}`);
    if (view.length(...path) !== expectedLength) t.fail(`view length ${JSON.stringify(path)} differs from JSON.parse: ${where}`);
    if (!isDeepStrictEqual(parsedView.member(...path), expected) || parsedView.length(...path) !== expectedLength) t.fail(`parsing view ${JSON.stringify(path)} differs from JSON.parse: ${where}`);
  }
  const document = parsed.value;
  const expectedKind = !isObject(document) ? 'neither' : document.error !== undefined && document.error !== null && Object.hasOwn(document, 'error') ? 'error' : Object.hasOwn(document, 'result') ? 'result' : 'neither';
  if (view.kind !== expectedKind || parsedView.kind !== expectedKind) t.fail(`kind ${view.kind} (parsing: ${parsedView.kind}), JSON.parse says ${expectedKind}: ${where}`);
}

/** The bytes with every control char made a space: what the scanner's blind spot reads them as. */
function spaced(bytes: Buffer): Buffer {
  return Buffer.from(bytes.map((byte) => (byte < 0x20 ? 0x20 : byte)));
}

/**
 * Reads up to a member (`upToMember`, the head reads' mode) against JSON.parse. On JSON: every member
 * and the kind are JSON.parse's. On bytes JSON.parse refuses: a read that answers vouches for the bytes
 * up to the member only, so those bytes, closed right after the member (`}` per step of its path), must
 * parse (control chars as spaces, the blind spot) to the same member; and a `result` kind, for the bytes
 * before the result's value, closed with `null}`: an object with a `result` and no `error`.
 */
function checkUpToMember(t: Test, bytes: Buffer, parsed: { readonly value: unknown } | undefined, paths: readonly string[][], where: string): void {
  const upTo = new MemberScan(bytes, { upToMember: true });
  const view = answerView(bytes, { scan: true, upToMember: true });
  for (const path of paths) {
    const found = upTo.find(path)?.found;
    const scanned = upTo.value(path);
    if (parsed !== undefined) {
      const expected = memberOf(parsed.value, path);
      if (scanned !== undefined && !isDeepStrictEqual(scanned.value, expected)) t.fail(`up to member ${JSON.stringify(path)}: scanned ${JSON.stringify(scanned.value)}, JSON.parse ${JSON.stringify(expected)}: ${where}`);
      if (!isDeepStrictEqual(view.member(...path), expected)) t.fail(`view up to member ${JSON.stringify(path)} differs from JSON.parse: ${where}`);
      continue;
    }
    if (found === undefined || path.length === 0) continue;
    const closed = parse(spaced(Buffer.concat([bytes.subarray(0, found.end), Buffer.from('}'.repeat(path.length))])));
    if (closed === undefined) t.fail(`up to member ${JSON.stringify(path)} read from bytes that do not parse up to it: ${where}`);
    else if (scanned !== undefined && !isDeepStrictEqual(scanned.value, memberOf(closed.value, path))) t.fail(`up to member ${JSON.stringify(path)}: scanned ${JSON.stringify(scanned.value)}, the bytes up to it say ${JSON.stringify(memberOf(closed.value, path))}: ${where}`);
  }
  const result = upTo.resultUpTo();
  if (parsed !== undefined) {
    const document = parsed.value;
    const expectedKind = !isObject(document) ? 'neither' : document.error !== undefined && document.error !== null && Object.hasOwn(document, 'error') ? 'error' : Object.hasOwn(document, 'result') ? 'result' : 'neither';
    if (view.kind !== expectedKind) t.fail(`kind up to member ${view.kind}, JSON.parse says ${expectedKind}: ${where}`);
  } else if (result !== undefined) {
    const closed = parse(spaced(Buffer.concat([bytes.subarray(0, result), Buffer.from('null}')])));
    if (closed === undefined || !isObject(closed.value) || !Object.hasOwn(closed.value, 'result') || Object.hasOwn(closed.value, 'error')) t.fail(`a result kind read from bytes that do not start an answer with a result: ${where}`);
  }
}

/** The raw `<<` lines of every execution-apis fixture: the answers as a node sent them. */
function fixtureAnswers(): { readonly file: string; readonly bytes: Buffer }[] {
  const out: { file: string; bytes: Buffer }[] = [];
  for (const folder of ['tests', 'tests-pending']) {
    const root = join(conformanceDir, 'execution-apis', folder);
    for (const dir of readdirSync(root, { withFileTypes: true }).filter((d) => d.isDirectory())) {
      for (const file of readdirSync(join(root, dir.name)).filter((f) => f.endsWith('.io')).sort()) {
        for (const line of readFileSync(join(root, dir.name, file), 'utf8').split('\n')) {
          if (line.startsWith('<< ')) out.push({ file: `${folder}/${dir.name}/${file}`, bytes: Buffer.from(line.slice(3), 'utf8') });
        }
      }
    }
  }
  return out;
}

t.test('every execution-apis answer reads as JSON.parse reads it, whole, truncated and mutated', async (t) => {
  const answers = fixtureAnswers();
  t.ok(answers.length > 100, `${answers.length} fixture answers found`);
  const generator = new Generator(prng(SEED));
  const tally: Tally = { documents: 0, declined: 0, refused: 0 };
  for (const { file, bytes } of answers) {
    const paths = pathsOf(JSON.parse(bytes.toString('utf8')));
    check(t, bytes, file, tally, true);
    check(t, bytes.subarray(0, Math.floor(generator.pick([0.1, 0.5, 0.9, 0.99]) * bytes.length)), `${file} truncated`, tally, false, paths);
    check(t, generator.mutate(bytes), `${file} mutated`, tally, false, paths);
  }
  t.equal(tally.declined, 0, 'no fixture answer JSON.parse accepts was declined');
  t.equal(tally.documents, answers.length * 3, 'every answer was checked whole, truncated and mutated');
  // A JSON object cut short is never JSON: every truncated answer was checked as bytes JSON.parse refuses.
  t.ok(tally.refused >= answers.length, `${tally.refused} of ${tally.documents} documents refused by JSON.parse`);
});

t.test(`random JSON reads as JSON.parse reads it (seed ${SEED})`, async (t) => {
  const generator = new Generator(prng(SEED));
  const tally: Tally = { documents: 0, declined: 0, refused: 0 };
  for (let i = 0; i < DOCUMENTS; i++) {
    const bytes = Buffer.from(generator.document(), 'utf8');
    if (parse(bytes) === undefined) t.fail(`the generator made bytes JSON.parse refuses (seed ${SEED}, document ${i}): ${bytes.toString()}`);
    const paths = pathsOf(JSON.parse(bytes.toString('utf8')));
    check(t, bytes, `document ${i}`, tally, true);
    check(t, bytes.subarray(0, Math.floor(generator.random() * bytes.length)), `document ${i} truncated`, tally, false, paths);
    for (let k = 0; k < 3; k++) check(t, generator.mutate(bytes), `document ${i} mutation ${k}`, tally, false, paths);
  }
  t.ok(tally.refused > DOCUMENTS, `mutations made ${tally.refused} documents JSON.parse refuses, each checked`);
  t.equal(tally.documents, DOCUMENTS * 5, `every document was checked whole, truncated and mutated three times (${tally.declined} still JSON after a mutation were declined and parsed)`);
});

t.test('a document the scanner cannot follow is parsed by the view', async (t) => {
  // A bad token deep inside a member the scanner only skips is still found: the view then parses, and
  // bytes JSON.parse refuses give no member at all.
  const broken = Buffer.from('{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","extra":[1,,2]}}');
  t.equal(new MemberScan(broken).find([]), undefined, 'a malformed array deep inside a skipped member is found');
  t.equal(answerView(broken, { scan: true }).kind, 'not-json');
  t.equal(answerView(broken, { scan: true }).member('result', 'number'), undefined, 'nothing is read from bytes that are not JSON');
  const duplicate = Buffer.from('{"result":{"number":"0x1","n\\u0075mber":"0x2"},"result":{"number":"0x3","number":"0x4"}}');
  t.equal(answerView(duplicate, { scan: true }).member('result', 'number'), '0x4', 'the last duplicate wins, at every level');
  const escaped = Buffer.from('{"result":{"number":"0x1","n\\u0075mber":"0x2"}}');
  t.equal(answerView(escaped, { scan: true }).member('result', 'number'), '0x2', 'an escaped name is the name it decodes to');
  t.equal(answerView(Buffer.from('{"result":{"a":"x\\"},\\\\","number":"0x7"}}'), { scan: true }).member('result', 'number'), '0x7', 'a quote and a backslash escaped inside a string do not end it');
});

t.test('a read up to a member reads the same across the first 2 kB it copies, and stops at the member', async (t) => {
  // The read copies the answer's first 2 kB, and the rest only when it reaches past them: a member at
  // every offset around that edge (a number cut there would look whole) reads as JSON.parse reads it.
  let checked = 0;
  for (let pad = 1990; pad <= 2060; pad++) {
    for (const value of ['12345678', '"0x1406f40"', '{"slot":341197053}', '[1,2,3]', 'true', '-1.5e3']) {
      const text = `{"jsonrpc":"2.0","id":1,"result":{"pad":"${'x'.repeat(pad)}","number":${value},"transactions":["0xab","0xcd"]}}`;
      const bytes = Buffer.from(text);
      const expected = (JSON.parse(text) as { result: { number: unknown } }).result.number;
      const view = answerView(bytes, { upToMember: true });
      t.equal(view.kind, 'result');
      t.same(view.member('result', 'number'), expected);
      t.same(new MemberScan(bytes, { upToMember: true }).value(['result', 'number'])?.value, expected);
      checked++;
    }
  }
  t.equal(checked, 71 * 6, 'every offset and value form read');
  // What it does not check: bytes after the member. The whole walk refuses them; the read up to the member reads it.
  const tail = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","transactions":["0x${'ab'.repeat(600)}",,]}}`);
  t.equal(answerView(tail, { scan: true }).member('result', 'number'), undefined, 'a malformed tail: nothing read by the whole walk');
  t.equal(answerView(tail, { upToMember: true }).member('result', 'number'), '0x10', 'read up to the member: its value');
  t.equal(answerView(tail, { upToMember: true }).kind, 'result');
  // Anything after the member that could replace it sends the read to the whole walk: JSON.parse's answer.
  const later = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","pad":"${'ab'.repeat(600)}","number":"0x11"}}`);
  t.equal(answerView(later, { upToMember: true }).member('result', 'number'), '0x11', 'a later duplicate wins');
  const escapedLater = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"number":"0x10","pad":"${'ab'.repeat(600)}","n\\u0075mber":"0x12"}}`);
  t.equal(answerView(escapedLater, { upToMember: true }).member('result', 'number'), '0x12', 'a later escaped duplicate wins');
  const errorAfter = Buffer.from(`{"jsonrpc":"2.0","id":1,"result":{"pad":"${'ab'.repeat(600)}"},"error":{"code":-32000,"message":"x"}}`);
  t.equal(answerView(errorAfter, { upToMember: true }).kind, 'error', 'an error after the result is the answer\'s kind');
});
