/**
 * A node's JSON-RPC answer to one call (not a batch), read from its bytes member by member: what a hook
 * asks for is found by scanning, and the answer is parsed only when the scanner declines (bytes it
 * cannot follow) or a hook asks for the whole of it. Whatever is read is what `JSON.parse` of the bytes
 * gives.
 */
export interface AnswerView {
  /**
   * What the answer is: `result` (it has a `result` and no `error`), `error` (an `error` other than
   * `null`), `neither` (JSON, but no JSON-RPC answer), or `not-json`.
   */
  readonly kind: 'result' | 'error' | 'neither' | 'not-json';
  /**
   * The value at `path` inside the answer (`member('result', 'number')`), as `JSON.parse` gives it;
   * undefined when absent, or when a step is not an object (an array's elements are not members).
   */
  member(...path: readonly string[]): unknown;
  /** The number of elements of the array at `path`; undefined when it is absent or not an array. */
  length(...path: readonly string[]): number | undefined;
  /** The whole answer, parsed (once); undefined when the bytes are not JSON. */
  parsed(): unknown;
}
