/**
 * JSON text as agave's serde_json writes it: u64 values past 2^53 (a `rentEpoch` of u64::MAX) as their
 * exact digits, and f64 values the way Rust prints them (`1.0`, `0.42`, `1e-7`).
 *
 * @module
 */

/** A value written into the JSON text as it is (already valid JSON). */
export class RawJson {
  /** @param text - The JSON text to write. */
  constructor(readonly text: string) {}
}

/**
 * An f64 as serde_json (ryu) writes it: the shortest digits that round-trip, a `.0` on integral values,
 * plain notation for a decimal point position from -4 to 16, scientific (`1e16`, `1.5e-7`) beyond.
 */
export function rustF64(value: number): RawJson {
  if (!Number.isFinite(value)) return new RawJson('null');
  if (value === 0) return new RawJson(Object.is(value, -0) ? '-0.0' : '0.0');
  const sign = value < 0 ? '-' : '';
  const [mantissa = '0', exponent = '0'] = Math.abs(value).toExponential().split('e');
  const digits = mantissa.replace('.', '');
  const point = Number(exponent) + 1; // digits × 10^(point - digits.length)
  const zeros = point - digits.length;
  let text: string;
  if (zeros >= 0 && point <= 16) text = `${digits}${'0'.repeat(zeros)}.0`;
  else if (point > 0 && point <= 16) text = `${digits.slice(0, point)}.${digits.slice(point)}`;
  else if (point > -5 && point <= 0) text = `0.${'0'.repeat(-point)}${digits}`;
  else text = `${digits.length === 1 ? digits : `${digits[0]}.${digits.slice(1)}`}e${point - 1}`;
  return new RawJson(sign + text);
}

/**
 * Writes `value` as JSON: bigints as exact integers, {@link RawJson} as given, object members in
 * insertion order, `undefined` members left out (as serde's `skip_serializing_if`).
 */
export function jsonText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof RawJson) return value.text;
  if (typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(jsonText).join(',')}]`;
  const members: string[] = [];
  for (const [key, member] of Object.entries(value)) {
    if (member !== undefined) members.push(`${JSON.stringify(key)}:${jsonText(member)}`);
  }
  return `{${members.join(',')}}`;
}
