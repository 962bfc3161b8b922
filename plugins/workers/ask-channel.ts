import type { AnswerMessage, AskMessage } from './messages.js';

/** Answers a topic's questions; what it returns (or throws) goes back to the asker. */
export type AnswerHandler = (payload: unknown) => unknown;

/**
 * Questions and answers over one IPC channel (a worker's `process`, or the primary's handle on one
 * worker): each question gets an id, and its answer settles the promise that asked, or a timeout does.
 */
export class AskChannel {
  readonly #send: (message: AskMessage | AnswerMessage) => boolean;
  readonly #pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  #nextId = 1;

  constructor(send: (message: AskMessage | AnswerMessage) => boolean) {
    this.#send = send;
  }

  /** Asks the other side; rejects when it answers with an error, cannot be reached, or stays silent for `timeoutMs`. */
  ask(topic: string, payload: unknown, timeoutMs: number): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new Error(`no answer to "${topic}" within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.#pending.set(id, { resolve, reject, timer });
      let sent = false;
      try {
        sent = this.#send({ tollgate: 'ask', id, topic, payload });
      } catch {
        sent = false;
      }
      if (!sent) this.#settle(id, { error: `cannot ask "${topic}": the channel is closed` });
    });
  }

  /** Handles an answer to one of this side's questions (other messages are ignored). */
  receiveAnswer(message: AnswerMessage): void {
    this.#settle(message.id, message);
  }

  /** Answers the other side's question with `handlers[topic]`. */
  async receiveQuestion(message: AskMessage, handlers: ReadonlyMap<string, AnswerHandler>): Promise<void> {
    const handler = handlers.get(message.topic);
    let answer: AnswerMessage;
    try {
      if (handler === undefined) throw new Error(`nothing answers "${message.topic}"`);
      answer = { tollgate: 'answer', id: message.id, value: await handler(message.payload) };
    } catch (error) {
      answer = { tollgate: 'answer', id: message.id, error: (error as Error)?.message ?? String(error) };
    }
    try {
      this.#send(answer);
    } catch {
      // The asker is gone: nobody waits for this answer.
    }
  }

  /** Rejects every question still waiting (the other side is gone). */
  closed(why: string): void {
    for (const id of [...this.#pending.keys()]) this.#settle(id, { error: why });
  }

  #settle(id: number, outcome: { value?: unknown; error?: string }): void {
    const pending = this.#pending.get(id);
    if (pending === undefined) return;
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    if (outcome.error !== undefined) pending.reject(new Error(outcome.error));
    else pending.resolve(outcome.value);
  }
}
