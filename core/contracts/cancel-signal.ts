// The one cancellation of a call, as every part that may be cancelled takes it.


/**
 * What a cancellable operation listens to: the part of an `AbortSignal` it needs. Every `AbortSignal`
 * is one; so is a call's own `RequestContext.cancelSignal`, which costs one small object where an `AbortController` costs an
 * `EventTarget` (a few microseconds and a few hundred bytes per call on a gateway's hot path).
 */
export interface CancelSignal {
  /** Whether it was cancelled. */
  readonly aborted: boolean;
  /** Why it was cancelled (undefined while it is not). */
  readonly reason: unknown;
  /** Calls `listener` once, when it is cancelled. */
  addEventListener(type: 'abort', listener: () => void, options?: { readonly once?: boolean }): void;
  /** Forgets a listener added with {@link CancelSignal.addEventListener}. */
  removeEventListener(type: 'abort', listener: () => void): void;
}
