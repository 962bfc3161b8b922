import { createHash } from 'node:crypto';
import type { Clock } from '../util/clock.js';
import { verifySecret } from './secret-hash.js';

const MAX_REMEMBERED = 10_000;

/** Checks a secret against its hash (`scrypt$...`): what {@link SecretVerifier} runs when it has no memory of the pair. */
export type SecretCheck = (secret: string, secretHash: string) => Promise<boolean>;

/**
 * Checks key secrets against their scrypt hashes, remembering verified ones for `cacheMs` (by a
 * SHA-256 of scope, secret and hash, never the secret itself) so scrypt runs once per client rather than
 * once per request, and sharing one scrypt run between concurrent checks of the same secret.
 */
export class SecretVerifier {
  readonly #cacheMs: number;
  readonly #clock: Clock;
  readonly #verified = new Map<string, number>();
  readonly #pending = new Map<string, Promise<boolean>>();
  readonly #check: SecretCheck;

  /** `cacheMs` 0 turns the memory off: every check runs scrypt. `verify` defaults to {@link verifySecret}. */
  constructor(options: { readonly cacheMs: number; readonly clock: Clock; readonly verify?: SecretCheck }) {
    this.#cacheMs = options.cacheMs;
    this.#clock = options.clock;
    this.#check = options.verify ?? verifySecret;
  }

  /** Whether `secret` was verified against `secretHash` lately (a {@link SecretVerifier.verify} would answer at once, without scrypt). */
  remembers(scope: string, secret: string, secretHash: string): boolean {
    const until = this.#verified.get(this.#idOf(scope, secret, secretHash));
    return until !== undefined && until > this.#clock.now();
  }

  #idOf(scope: string, secret: string, secretHash: string): string {
    return createHash('sha256').update(scope).update('\0').update(secret).update('\0').update(secretHash).digest('base64');
  }

  /**
   * Whether `secret` matches `secretHash`: `true` at once when it was verified lately, a promise
   * otherwise. `scope` (an API key, a key id) keeps the memory of different keys apart.
   */
  verify(scope: string, secret: string, secretHash: string): true | Promise<boolean> {
    const id = this.#idOf(scope, secret, secretHash);
    const until = this.#verified.get(id);
    if (until !== undefined) {
      if (until > this.#clock.now()) return true;
      this.#verified.delete(id);
    }
    let verifying = this.#pending.get(id);
    if (verifying === undefined) {
      verifying = this.#check(secret, secretHash).finally(() => this.#pending.delete(id));
      this.#pending.set(id, verifying);
    }
    return verifying.then((ok) => {
      if (ok) this.#remember(id);
      return ok;
    });
  }

  #remember(id: string): void {
    if (this.#cacheMs === 0) return;
    this.#verified.delete(id);
    this.#verified.set(id, this.#clock.now() + this.#cacheMs);
    if (this.#verified.size > MAX_REMEMBERED) this.#verified.delete(this.#verified.keys().next().value!);
  }
}
