import type { ApiKeyRecord, KeyStore } from '../contracts/keys.js';

/** A {@link KeyStore} over a fixed map of keys, as given in the gateway config. */
export class StaticKeyStore implements KeyStore {
  readonly #keys: ReadonlyMap<string, ApiKeyRecord>;

  constructor(keys: Iterable<readonly [apiKey: string, record: ApiKeyRecord]>) {
    this.#keys = new Map(keys);
  }

  find(apiKey: string): ApiKeyRecord | undefined {
    return this.#keys.get(apiKey);
  }
}
