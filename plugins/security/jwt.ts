/**
 * JWT checks with `jose`: the signature against one of the key's public keys (chosen by `kid`), the
 * algorithm (RS256 or ES256, the key's own), `exp`, `nbf` and `aud`; and the claims that narrow what the
 * token allows (`methods`, `addresses`, `origins`).
 *
 * @module
 */
import type { JWTPayload } from 'jose';
import { loadJose } from './peers.js';
import { parseOriginPattern } from './origin-pattern.js';
import { echo, type Refusal } from './refusal.js';
import type { CompiledAllowlist, JwtPublicKey, JwtSettings } from './settings.js';

type Jose = typeof import('jose');

/** Claims a token may carry to narrow what it allows, each an array of strings like the key's lists. */
export const NARROWING_CLAIMS = ['methods', 'addresses', 'origins'] as const;

/** A verified token: the lists its claims narrow the call to. */
export interface VerifiedJwt {
  /** The token's narrowing claims, prepared; `undefined` lists narrow nothing. */
  readonly claims: CompiledAllowlist;
}

type Imported = Awaited<ReturnType<Jose['importSPKI']>>;

function refusal(setting: string, reason: string, fix: string): Refusal {
  return { setting, reason, fix };
}

function listClaim(payload: JWTPayload, name: string): string[] | undefined | Refusal {
  const value = payload[name];
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'string' && entry !== '')) {
    return refusal(`jwt.${name}`, `JWT claim "${name}" is malformed`, `issue a JWT whose "${name}" claim is an array of strings`);
  }
  return value as string[];
}

function claimsOf(payload: JWTPayload): CompiledAllowlist | Refusal {
  const methods = listClaim(payload, 'methods');
  if (methods !== undefined && !Array.isArray(methods)) return methods;
  const addresses = listClaim(payload, 'addresses');
  if (addresses !== undefined && !Array.isArray(addresses)) return addresses;
  const origins = listClaim(payload, 'origins');
  if (origins !== undefined && !Array.isArray(origins)) return origins;
  let patterns;
  try {
    patterns = origins?.map(parseOriginPattern);
  } catch (error) {
    return refusal('jwt.origins', 'JWT claim "origins" is malformed', `issue a JWT whose "origins" entries are origins: ${(error as Error).message}`);
  }
  return {
    methods: methods === undefined ? undefined : new Set(methods),
    addresses: addresses === undefined ? undefined : new Set(addresses.map((a) => a.toLowerCase())),
    origins: patterns,
    userAgents: undefined,
  };
}

/**
 * Verifies JWTs of API keys. Public keys are imported once (by PEM and algorithm) and reused; time comes
 * from `now`, the gateway's clock.
 */
export class JwtVerifier {
  readonly #now: () => number;
  readonly #imported = new Map<string, Promise<Imported>>();

  constructor(now: () => number) {
    this.#now = now;
  }

  #import(key: JwtPublicKey, importSPKI: Jose['importSPKI']): Promise<Imported> {
    const id = `${key.alg}\0${key.publicKey}`;
    let imported = this.#imported.get(id);
    if (imported === undefined) {
      imported = importSPKI(key.publicKey, key.alg);
      // A key that fails to import is not remembered, so a corrected key is tried afresh.
      imported.catch(() => this.#imported.delete(id));
      this.#imported.set(id, imported);
    }
    return imported;
  }

  /** Checks `token` under `settings`: the verified token, or the refusal naming what failed and how to fix it. */
  async verify(token: string, settings: JwtSettings): Promise<VerifiedJwt | Refusal> {
    const { errors, importSPKI, jwtVerify } = await loadJose();
    const kids = settings.keys.map((k) => k.kid);
    let chosen: JwtPublicKey | undefined;
    let payload: JWTPayload;
    try {
      const verified = await jwtVerify(
        token,
        async (header) => {
          chosen = header.kid === undefined ? (settings.keys.length === 1 ? settings.keys[0] : undefined) : settings.keys.find((k) => k.kid === header.kid);
          if (chosen === undefined) throw new UnknownKid(header.kid);
          if (header.alg !== chosen.alg) throw new errors.JOSEAlgNotAllowed(`"alg" (Algorithm) Header Parameter value not allowed`);
          const key = chosen;
          return this.#import(key, importSPKI).catch(() => {
            throw new UnusablePublicKey(key.kid);
          });
        },
        {
          algorithms: [...new Set(settings.keys.map((k) => k.alg))],
          currentDate: new Date(this.#now()),
          ...(settings.audience === undefined ? {} : { audience: typeof settings.audience === 'string' ? settings.audience : [...settings.audience] }),
        },
      );
      payload = verified.payload;
    } catch (error) {
      return refusalOfJwtError(error, kids, chosen, errors);
    }
    const claims = claimsOf(payload);
    return 'reason' in claims ? claims : { claims };
  }
}

class UnknownKid extends Error {
  readonly kid: string | undefined;
  constructor(kid: string | undefined) {
    super('unknown kid');
    this.kid = kid;
  }
}

class UnusablePublicKey extends Error {
  readonly kid: string;
  constructor(kid: string) {
    super('unusable public key');
    this.kid = kid;
  }
}

function refusalOfJwtError(error: unknown, kids: readonly string[], chosen: JwtPublicKey | undefined, errors: Jose['errors']): Refusal {
  const known = kids.map((kid) => `"${kid}"`).join(', ');
  if (error instanceof UnknownKid) {
    return error.kid === undefined
      ? refusal('jwt.keys', 'JWT has no "kid" header and the key has several public keys', `sign with one of the key's public keys and put its id in the token's "kid" header (${known})`)
      : refusal('jwt.keys', `JWT "kid" is not one of the key's public keys: ${echo(error.kid)}`, `sign with one of the key's public keys (${known}), or add this public key to the key's "jwt.keys"`);
  }
  if (error instanceof UnusablePublicKey) {
    return refusal('jwt.keys', `the key's public key "${error.kid}" cannot be used`, 'replace it in the key\'s "jwt.keys" with a PEM public key of its algorithm (RSA for RS256, P-256 for ES256)');
  }
  if (error instanceof errors.JWTExpired) return refusal('jwt', 'JWT expired', 'issue a new token (its "exp" is in the past)');
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return refusal('jwt.audience', 'JWT audience not accepted', 'issue a token whose "aud" names the audience set in the key\'s "jwt.audience"');
    if (error.claim === 'nbf') return refusal('jwt', 'JWT not valid yet', 'wait until the token\'s "nbf", or issue a token that is valid now');
    return refusal('jwt', `JWT claim "${error.claim}" is not valid`, 'issue a new token');
  }
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return refusal('jwt.keys', 'JWT algorithm not allowed', `sign with the algorithm of the key's public key${chosen === undefined ? '' : ` "${chosen.kid}" (${chosen.alg})`}: RS256 or ES256`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return refusal('jwt.keys', 'JWT signature does not verify', `sign with the private key of the public key named by "kid"${chosen === undefined ? '' : ` ("${chosen.kid}")`}`);
  }
  return refusal('jwt', 'JWT malformed', 'send Authorization: Bearer <JWT>, a signed token in compact form (header.payload.signature)');
}
