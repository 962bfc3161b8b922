/**
 * `work`, run in the check phase (`setImmediate`) `turns` event-loop turns from now (1: this turn's),
 * after the callbacks that phase already holds; resolves with what it returns. For tests of what the
 * stores gather over event-loop turns.
 */
export function inCheckPhase<T>(turns: number, work: () => T | PromiseLike<T>): Promise<T> {
  return new Promise((resolve) => {
    const step = (left: number): void => void setImmediate(() => (left === 1 ? resolve(work()) : step(left - 1)));
    step(turns);
  });
}
