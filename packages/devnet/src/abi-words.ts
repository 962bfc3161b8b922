/** A `0x`-prefixed hex string. */
export type Hex = `0x${string}`;

/** A 20-byte address as `0x`-prefixed hex. */
export type Address = `0x${string}`;

/** One 32-byte ABI word for a uint256, a bool or an address. */
export function abiWord(value: bigint | number | boolean | Address): string {
  if (typeof value === 'boolean') return (value ? '1' : '0').padStart(64, '0');
  if (typeof value === 'string') return value.slice(2).toLowerCase().padStart(64, '0');
  const n = BigInt(value);
  if (n < 0n || n >= 1n << 256n) throw new RangeError(`not a uint256: ${n}`);
  return n.toString(16).padStart(64, '0');
}

/** A short text as a right-padded `bytes32` (at most 32 UTF-8 bytes). */
export function bytes32(text: string): Hex {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > 32) throw new RangeError(`"${text}" is longer than 32 bytes`);
  return `0x${bytes.toString('hex').padEnd(64, '0')}`;
}

/** Calldata: a 4-byte selector followed by static ABI words (`0x`-prefixed hex without `0x` for the words). */
export function encodeCall(selector: Hex, ...words: readonly string[]): Hex {
  return `${selector}${words.map((w) => (w.startsWith('0x') ? w.slice(2) : w)).join('')}`;
}

/** The revert payload of `require(false, reason)`: `Error(string)` ABI-encoded (`0x08c379a0…`). */
export function encodeErrorString(reason: string): Hex {
  const bytes = Buffer.from(reason, 'utf8');
  const padded = bytes.toString('hex').padEnd(Math.ceil(bytes.length / 32) * 64, '0');
  return `0x08c379a0${abiWord(32)}${abiWord(bytes.length)}${padded}`;
}

/** The revert payload of a Solidity panic: `Panic(uint256)` ABI-encoded (`0x4e487b71…`). */
export function encodePanic(code: number): Hex {
  return `0x4e487b71${abiWord(code)}`;
}

/** `0x`-prefixed hex quantity of a number (`0x0`, `0x1a`...). */
export function quantity(value: number | bigint): Hex {
  return `0x${BigInt(value).toString(16)}`;
}
