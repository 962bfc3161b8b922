import type { Address } from './abi-words.js';

/**
 * One validator as Bor's `bor_getCurrentValidators` answers it (`valset.Validator` in Bor): plain JSON
 * numbers, not hex quantities, in Bor's key order.
 */
export interface BorValidator {
  /** Validator id. */
  readonly ID: number;
  /** The signer address, lowercase. */
  readonly signer: Address;
  /** Voting power. */
  readonly power: number;
  /** Proposer priority (may be negative). */
  readonly accum: number;
}

/** A configured signer with any of its validator fields (the others get defaults). */
export interface BorSignerConfig {
  /** The signer address (20-byte hex, any case). */
  readonly signer: string;
  /** Validator id (default: position + 1). */
  readonly ID?: number;
  /** Voting power (default 1). */
  readonly power?: number;
  /** Proposer priority (default: computed, see {@link borValidators}). */
  readonly accum?: number;
}

/** A configured signer: an address, or a {@link BorSignerConfig}. */
export type BorSignerInput = string | BorSignerConfig;

const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * Turns configured signers into Bor validators. Defaults: `ID` is the position + 1, `power` is 1, and
 * `accum` is what Bor's proposer-priority rotation gives after one round from zero (every priority grows
 * by its power, then the proposer's drops by the total power: they sum to 0 and one is negative).
 *
 * @throws TypeError for a signer that is not a 20-byte hex address or a non-integer field.
 */
export function borValidators(signers: readonly BorSignerInput[]): BorValidator[] {
  const entries = signers.map((input, i) => {
    const entry = typeof input === 'string' ? { signer: input } : input;
    if (typeof entry.signer !== 'string' || !ADDRESS.test(entry.signer)) throw new TypeError(`bor signer ${i}: not a 20-byte hex address: ${String(entry.signer)}`);
    for (const field of ['ID', 'power', 'accum'] as const) {
      const value = entry[field];
      if (value !== undefined && !Number.isSafeInteger(value)) throw new TypeError(`bor signer ${i}: ${field} must be an integer`);
    }
    return entry;
  });
  const powers = entries.map((e) => e.power ?? 1);
  const total = powers.reduce((sum, p) => sum + p, 0);
  const priorities = [...powers];
  let proposer = 0;
  priorities.forEach((p, i) => { if (p > (priorities[proposer] ?? 0)) proposer = i; });
  if (priorities.length > 0) priorities[proposer] = (priorities[proposer] ?? 0) - total;
  return entries.map((e, i) => ({
    ID: e.ID ?? i + 1,
    signer: e.signer.toLowerCase() as Address,
    power: powers[i] ?? 1,
    accum: e.accum ?? priorities[i] ?? 0,
  }));
}
