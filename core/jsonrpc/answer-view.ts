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

/** An {@link AnswerView} of `body`, scanning first and parsing when the scanner declines. */
export function answerView(body: Uint8Array): AnswerView {
  const scan = new MemberScan(body);
  let document: { readonly value: unknown } | undefined;
  const parsed = (): unknown => {
    if (document === undefined) {
      try {
        document = { value: JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8')) as unknown };
      } catch {
        document = { value: undefined };
      }
    }
    return document.value;
  };
  const member = (...path: readonly string[]): unknown => {
    const scanned = document === undefined ? scan.value(path) : undefined;
    return scanned === undefined ? memberOf(parsed(), path) : scanned.value;
  };
  let kind: AnswerView['kind'] | undefined;
  return {
    get kind() {
      if (kind === undefined) {
        const root = document === undefined ? scan.find([]) : undefined;
        if (root === undefined && parsed() === undefined) kind = 'not-json';
        else {
          const error = scan.find(['error']);
          const result = scan.find(['result']);
          const hasError = error === undefined || result === undefined ? isObject(parsed()) && (parsed() as Record<string, unknown>).error != null : error.found !== undefined && member('error') !== null;
          const hasResult = error === undefined || result === undefined ? isObject(parsed()) && Object.hasOwn(parsed() as object, 'result') : result.found !== undefined;
          kind = hasError ? 'error' : hasResult ? 'result' : 'neither';
        }
      }
      return kind;
    },
    member,
    length(...path) {
      const scanned = document === undefined ? scan.length(path) : undefined;
      if (scanned !== undefined) return scanned.length;
      const value = memberOf(parsed(), path);
      return Array.isArray(value) ? value.length : undefined;
    },
    parsed,
  };
}
