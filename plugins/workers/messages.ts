/** What a worker group's processes say to each other over the cluster IPC channel. */

/** The group as the primary sees it, pushed to every worker whenever it changes. */
export interface GroupState {
  /** Workers the group runs when nothing is wrong. */
  readonly workers: number;
  /** Workers serving now (started and not draining). */
  readonly serving: number;
  /** Whether the group is shutting down. */
  readonly draining: boolean;
  /** Workers replaced after they died, since the group started. */
  readonly restarts: number;
}

/** A question for the other side (`topic` names the answer handler), answered once by an `AnswerMessage`. */
export interface AskMessage {
  readonly tollgate: 'ask';
  readonly id: number;
  readonly topic: string;
  readonly payload?: unknown;
}

/** The answer to an `AskMessage`: a value, or why there is none. */
export interface AnswerMessage {
  readonly tollgate: 'answer';
  readonly id: number;
  readonly value?: unknown;
  readonly error?: string;
}

/** Primary → worker: what to serve (the answer to its hello), then the group's state and the order to drain. */
export type PrimaryMessage =
  | { readonly tollgate: 'start'; readonly data: unknown; readonly worker: number }
  | { readonly tollgate: 'group'; readonly state: GroupState }
  | { readonly tollgate: 'drain' };

/** Worker → primary: ready to be told what to serve, then serving, or could not start. */
export type WorkerMessage =
  | { readonly tollgate: 'hello' }
  | { readonly tollgate: 'serving' }
  | { readonly tollgate: 'failed'; readonly reason: string };

/** Whether `message` is one of Tollgate's (other libraries, prom-client's included, share the channel). */
export function isTollgateMessage(message: unknown): message is { readonly tollgate: string } {
  return typeof message === 'object' && message !== null && typeof (message as { tollgate?: unknown }).tollgate === 'string';
}

/** The primary's built-in topic that asks every worker `{ topic, payload }` and answers with their answers. */
export const GATHER_TOPIC = 'gather';
