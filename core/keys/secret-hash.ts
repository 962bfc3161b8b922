import { randomBytes, scrypt, scryptSync, timingSafeEqual, type ScryptOptions } from 'node:crypto';

/** The prefix of every hash {@link hashSecret} produces: `scrypt$<salt base64>$<hash base64>`. */
export const SECRET_HASH_PREFIX = 'scrypt$';

// One set of parameters for every store that hashes secrets (config keys, SQLite, Redis, the admin API):
// the encoded form carries salt and hash only, so the parameters must not differ between them.
const PARAMS: ScryptOptions = { N: 16_384, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };
const SALT_BYTES = 16;
const HASH_BYTES = 32;
const ENCODED = /^scrypt\$([A-Za-z0-9+/]+={0,2})\$([A-Za-z0-9+/]+={0,2})$/;

function encode(salt: Buffer, hash: Buffer): string {
  return `${SECRET_HASH_PREFIX}${salt.toString('base64')}$${hash.toString('base64')}`;
}

function decode(encoded: string): { salt: Buffer; hash: Buffer } | undefined {
  const match = ENCODED.exec(encoded);
  if (match === null) return undefined;
  const salt = Buffer.from(match[1]!, 'base64');
  const hash = Buffer.from(match[2]!, 'base64');
  return salt.length === 0 || hash.length === 0 ? undefined : { salt, hash };
}

/** The scrypt parameters of every secret hash (see {@link hashSecret}), for a verifier running scrypt elsewhere (a worker thread). */
export const SECRET_SCRYPT_PARAMS: Readonly<ScryptOptions> = Object.freeze({ ...PARAMS });

/** The salt and hash of a secret hash (`scrypt$<salt base64>$<hash base64>`), or undefined when it is malformed. */
export function decodeSecretHash(secretHash: string): DecodedSecretHash | undefined {
  return decode(secretHash);
}

/** The parts of a secret hash. */
export interface DecodedSecretHash {
  /** The scrypt salt. */
  readonly salt: Buffer;
  /** The scrypt output the secret must reproduce. */
  readonly hash: Buffer;
}

/** Whether `value` has the form of a secret hash (`scrypt$<salt base64>$<hash base64>`). */
export function isSecretHash(value: string): boolean {
  return decode(value) !== undefined;
}

/**
 * Hashes an API key secret with scrypt (N=16384, r=8, p=1, a random 16-byte salt, a 32-byte hash) into
 * `scrypt$<salt base64>$<hash base64>`, the form {@link ApiKeyRecord.secretHash} holds. Runs on libuv's
 * thread pool.
 *
 * @example
 * ```ts
 * const secretHash = await hashSecret('s3cret-of-the-key');
 * await verifySecret('s3cret-of-the-key', secretHash); // true
 * ```
 */
export function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(SALT_BYTES);
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, HASH_BYTES, PARAMS, (error, hash) => (error === null ? resolve(encode(salt, hash)) : reject(error)));
  });
}

/** {@link hashSecret}, blocking: for start-up (hashing the secrets of a config file), not for requests. */
export function hashSecretSync(secret: string): string {
  const salt = randomBytes(SALT_BYTES);
  return encode(salt, scryptSync(secret, salt, HASH_BYTES, PARAMS));
}

/**
 * Checks `secret` against a hash from {@link hashSecret}, comparing in constant time. A malformed hash
 * never matches.
 */
export function verifySecret(secret: string, secretHash: string): Promise<boolean> {
  const decoded = decode(secretHash);
  if (decoded === undefined) return Promise.resolve(false);
  const { salt, hash } = decoded;
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, hash.length, PARAMS, (error, computed) => (error === null ? resolve(timingSafeEqual(computed, hash)) : reject(error)));
  });
}
