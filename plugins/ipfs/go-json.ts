const HEX = '0123456789abcdef';

/** Length of the UTF-8 sequence at `i` as Go's `utf8.DecodeRune` reads it: 0 when invalid (one byte then stands for U+FFFD). */
function runeLength(bytes: Uint8Array, i: number): number {
  const b0 = bytes[i]!;
  const at = (k: number): number => (i + k < bytes.length ? bytes[i + k]! : -1);
  const cont = (b: number): boolean => b >= 0x80 && b <= 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) return cont(at(1)) ? 2 : 0;
  if (b0 >= 0xe0 && b0 <= 0xef) {
    const b1 = at(1);
    const lo = b0 === 0xe0 ? 0xa0 : 0x80;
    const hi = b0 === 0xed ? 0x9f : 0xbf; // no surrogates
    return b1 >= lo && b1 <= hi && cont(at(2)) ? 3 : 0;
  }
  if (b0 >= 0xf0 && b0 <= 0xf4) {
    const b1 = at(1);
    const lo = b0 === 0xf0 ? 0x90 : 0x80;
    const hi = b0 === 0xf4 ? 0x8f : 0xbf; // nothing above U+10FFFF
    return b1 >= lo && b1 <= hi && cont(at(2)) && cont(at(3)) ? 4 : 0;
  }
  return 0;
}

/**
 * Encodes bytes as a JSON string exactly as Go's `encoding/json` encodes a Go `string` holding them
 * (what kubo answers `object/get` with): invalid UTF-8 becomes `\ufffd`, control characters `\b \f \n
 * \r \t` or `\u00XX`, and `<`, `>`, `&`, U+2028 and U+2029 are escaped (Go's HTML-safe default).
 *
 * @example
 * ```ts
 * goJsonString(Buffer.from('\b\u0002\u0012\nHello Mars\u0018\n')); // '"\\b\\u0002\\u0012\\nHello Mars\\u0018\\n"'
 * ```
 */
export function goJsonString(bytes: Uint8Array): string {
  let out = '"';
  let start = 0;
  const flush = (end: number): void => {
    if (end > start) out += Buffer.from(bytes.buffer, bytes.byteOffset + start, end - start).toString('utf8');
  };
  for (let i = 0; i < bytes.length; ) {
    const b = bytes[i]!;
    if (b < 0x80) {
      if (b >= 0x20 && b !== 0x22 && b !== 0x5c && b !== 0x3c && b !== 0x3e && b !== 0x26) {
        i++;
        continue;
      }
      flush(i);
      switch (b) {
        case 0x22: out += '\\"'; break;
        case 0x5c: out += '\\\\'; break;
        case 0x08: out += '\\b'; break;
        case 0x0c: out += '\\f'; break;
        case 0x0a: out += '\\n'; break;
        case 0x0d: out += '\\r'; break;
        case 0x09: out += '\\t'; break;
        default: out += `\\u00${HEX[b >> 4]}${HEX[b & 0xf]}`;
      }
      start = ++i;
      continue;
    }
    const length = runeLength(bytes, i);
    if (length === 0) {
      flush(i);
      out += '\\ufffd';
      start = ++i;
      continue;
    }
    // U+2028 and U+2029 (E2 80 A8 / E2 80 A9)
    if (length === 3 && b === 0xe2 && bytes[i + 1] === 0x80 && (bytes[i + 2] === 0xa8 || bytes[i + 2] === 0xa9)) {
      flush(i);
      out += bytes[i + 2] === 0xa8 ? '\\u2028' : '\\u2029';
      i += 3;
      start = i;
      continue;
    }
    i += length;
  }
  flush(bytes.length);
  return `${out}"`;
}
