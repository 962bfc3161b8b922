/** Keys whose room is kept at once; past it the table starts again (those keys wait for one charge). */
const MAX_KEYS = 10_000;

/** A key's room: the credits its calls may have running ahead of their charges, and those running now. */
interface Room {
  readonly credits: number;
  running: number;
}

/**
 * Which calls of a key may run ahead of a pending charge (see `RunAhead`): as many as fit, in credits,
 * within what the key's last charge on this instance left it (its day's and paid balances) and within
 * one second of its throughput (`creditsPerSecond`), counting the calls running ahead now. A key whose
 * last charge was refused, or could not be taken, has no room until a charge of it passes again. So a
 * key that ran out reaches no node before a charge passes, and a key that floods past its throughput
 * has at most one second of it at its nodes beyond what it is charged.
 */
export class AheadRoom {
  readonly #rooms = new Map<string, Room>();

  /**
   * Takes room for a call of `credits`: the function that gives it back once the charge settled, or
   * undefined when the call must wait for its charge.
   */
  take(keyId: string, credits: number): (() => void) | undefined {
    const room = this.#rooms.get(keyId);
    if (room === undefined || room.running + credits > room.credits) return undefined;
    room.running += credits;
    return () => {
      room.running -= credits;
    };
  }

  /** A charge of the key passed, leaving it `balance` credits (day and paid) to spend. */
  passed(keyId: string, balance: number, creditsPerSecond: number | undefined): void {
    const credits = Math.min(balance, creditsPerSecond ?? balance);
    const room = this.#rooms.get(keyId);
    if (room !== undefined && room.credits === credits) return;
    if (room === undefined && this.#rooms.size >= MAX_KEYS) this.#rooms.clear();
    this.#rooms.set(keyId, { credits, running: room?.running ?? 0 });
  }

  /** A charge of the key was refused or could not be taken. */
  closed(keyId: string): void {
    this.#rooms.delete(keyId);
  }
}
