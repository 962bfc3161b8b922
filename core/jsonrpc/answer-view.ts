import type { AnswerView } from '../contracts/answer-view.js';
import { MemberScan } from './member-scan.js';

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value at `path` in a parsed document, read as {@link AnswerView.member} reads it. */
function memberOf(document: unknown, path: readonly string[]): unknown {
  let value = document;
  for (const name of path) {
    if (!isObject(value) || !Object.hasOwn(value, name)) return undefined;
    value = value[name];
  }
  return value;
}

/**
 * Answers shorter than this are parsed rather than scanned: on a few hundred bytes JSON.parse is the
 * faster (measured: 0.5 against 0.8 µs on `{"result":"0x1234"}`, 1.7 against 2.0 on an account answer
 * of 450 bytes), and makes little garbage; on the bench's block of 120 hashes (12 kB) the scan is
 * (9 to 10 against 14 to 16 µs, and none of the parse's objects for the GC), and on three logs (1.8 kB)
 * counted for a cap (2.2 against 3.6).
 */
const SCAN_FROM = 1024;

/** An {@link AnswerView} that scans first and parses when the scanner declines (a class: an object literal with a getter and closures costs more to make than the scan itself). */
class ScannedAnswer implements AnswerView {
  private readonly scan: MemberScan | undefined;
  private document: { readonly value: unknown } | undefined;
  private answerKind: AnswerView['kind'] | undefined;

  constructor(private readonly body: Uint8Array, scan: boolean, upToMember: boolean) {
    this.scan = scan ? new MemberScan(body, { upToMember }) : undefined;
  }

  get kind(): AnswerView['kind'] {
    this.answerKind ??= this.readKind();
    return this.answerKind;
  }

  private readKind(): AnswerView['kind'] {
    if (this.document === undefined && this.scan?.resultUpTo() !== undefined) return 'result';
    const error = this.document === undefined ? this.scan?.find(['error']) : undefined;
    const result = error === undefined ? undefined : this.scan?.find(['result']);
    if (error !== undefined && result !== undefined) {
      if (error.found !== undefined && this.member('error') !== null) return 'error';
      return result.found === undefined ? 'neither' : 'result';
    }
    // The scanner declined: the parser says.
    const document = this.parsed();
    if (document === undefined) return 'not-json';
    if (!isObject(document)) return 'neither';
    if (document.error !== undefined && document.error !== null) return 'error';
    return Object.hasOwn(document, 'result') ? 'result' : 'neither';
  }

  member(...path: readonly string[]): unknown {
    const scanned = this.document === undefined ? this.scan?.value(path) : undefined;
    return scanned === undefined ? memberOf(this.parsed(), path) : scanned.value;
  }

  length(...path: readonly string[]): number | undefined {
    const scanned = this.document === undefined ? this.scan?.length(path) : undefined;
    if (scanned !== undefined) return scanned.length;
    const value = memberOf(this.parsed(), path);
    return Array.isArray(value) ? value.length : undefined;
  }

  parsed(): unknown {
    if (this.document === undefined) {
      const { body } = this;
      try {
        const bytes = Buffer.isBuffer(body) ? body : Buffer.from(body.buffer, body.byteOffset, body.byteLength);
        this.document = { value: JSON.parse(bytes.toString('utf8')) as unknown };
      } catch {
        this.document = { value: undefined };
      }
    }
    return this.document.value;
  }
}

/** Options of {@link answerView}. */
export interface AnswerViewOptions {
  /** Scan (true) or parse (false) whatever the length; by default answers under 1 kB are parsed. For tests of either path. */
  readonly scan?: boolean;
  /**
   * A read checks the bytes up to the member it reads, not the whole answer: `kind` is `result` once a
   * `result` key is found before any `error` key and no `error` key follows, and `member(...)` stops at
   * the member, searching the rest natively only for anything that could replace it (a later key of the
   * same name, an escaped name). On JSON, what is read is what JSON.parse gives, as without it; on bytes
   * JSON.parse refuses past the member, the member is read where it would otherwise not be. For reads
   * whose answer is forwarded as the node sent it whatever they find (the core's head reads, for
   * instance): a block read for its `number` then costs a walk to its `number`, not over its 120
   * transaction hashes. Default false.
   */
  readonly upToMember?: boolean;
}

/**
 * An {@link AnswerView} of `body`: members are found by scanning its bytes, and the answer is parsed
 * only when the scanner declines or {@link AnswerView.parsed} is asked (or when it is short enough that
 * parsing is the cheaper).
 */
export function answerView(body: Uint8Array, options: AnswerViewOptions = {}): AnswerView {
  return new ScannedAnswer(body, options.scan ?? body.byteLength >= SCAN_FROM, options.upToMember === true);
}
