/** A refusal of a key, plan or usage operation, with the HTTP status the admin API answers with. */
export class KeyManagerError extends Error {
  /** `bad_request`, `not_found`, `conflict`, `read_only` or `unavailable`. */
  readonly code: 'bad_request' | 'not_found' | 'conflict' | 'read_only' | 'unavailable';
  /** The HTTP status. */
  readonly status: number;
  constructor(code: KeyManagerError['code'], message: string) {
    super(message);
    this.name = 'KeyManagerError';
    this.code = code;
    this.status = { bad_request: 400, not_found: 404, conflict: 409, read_only: 409, unavailable: 503 }[code];
  }
}

/** Runs a store operation for a manager; a store that cannot be reached becomes `unavailable`, naming `store`. */
export async function storeOperation<T>(store: string, operation: () => T | Promise<T>): Promise<T> {
  try {
    return await operation();
  } catch (error) {
    if (error instanceof KeyManagerError) throw error;
    throw new KeyManagerError('unavailable', `the ${store} cannot be reached: ${(error as Error).message}`);
  }
}
