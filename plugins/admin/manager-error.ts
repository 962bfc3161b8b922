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
