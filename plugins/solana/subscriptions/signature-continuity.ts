/**
 * Keeps a `signatureSubscribe` stream continuous across nodes: its outcome is delivered once.
 *
 * @module
 */
import type { StreamAsk, StreamContinuity } from '../../../core/family-api.js';

/** The commitment levels, weakest first. */
const LEVELS = ['processed', 'confirmed', 'finalized'];

/** A signature notification's result: `{context: {slot}, value: {err} | "receivedSignature"}`. */
interface SignatureEvent {
  readonly context?: { readonly slot?: number };
  readonly value?: unknown;
}

/** One entry of `getSignatureStatuses`. */
interface SignatureStatus {
  readonly slot: number;
  readonly err: unknown;
  readonly confirmationStatus?: string | null;
}

/**
 * The outcome of one transaction, once: the node ends the subscription after it, and so does the
 * gateway ({@link SignatureContinuity.ends}). A `receivedSignature` notice (asked with
 * `enableReceivedNotification`) comes at most once before it. After a move the new node is asked for the
 * signature's status (`getSignatureStatuses`, history searched): when the transaction reached the
 * stream's commitment meanwhile, its outcome is delivered then, since the new node's subscription, opened
 * after the fact, would never send it; a repeat from the new node is dropped.
 */
export class SignatureContinuity implements StreamContinuity {
  readonly #signature: string;
  readonly #level: number;
  #received = false;
  #done = false;

  constructor(signature: string, commitment: string) {
    this.#signature = signature;
    this.#level = Math.max(0, LEVELS.indexOf(commitment));
  }

  next(result: unknown): readonly unknown[] {
    if (this.#done) return [];
    if ((result as SignatureEvent).value === 'receivedSignature') {
      if (this.#received) return [];
      this.#received = true;
      return [result];
    }
    this.#done = true;
    return [result];
  }

  async resumed(ask: StreamAsk): Promise<readonly unknown[]> {
    if (this.#done) return [];
    const answer = (await ask('getSignatureStatuses', [[this.#signature], { searchTransactionHistory: true }])) as { value?: ReadonlyArray<SignatureStatus | null> };
    const status = answer.value?.[0];
    if (status === undefined || status === null || LEVELS.indexOf(status.confirmationStatus ?? 'processed') < this.#level) return [];
    // The new node's own notification may have come while the read was out.
    if (this.#done) return [];
    this.#done = true;
    return [{ context: { slot: status.slot }, value: { err: status.err ?? null } }];
  }

  ends(event: unknown): boolean {
    return (event as SignatureEvent).value !== 'receivedSignature';
  }
}
