/** One end of an IPC channel: a worker's `process`, or the primary's `worker` handle on one. */
export interface IpcEnd {
  isConnected?(): boolean;
  readonly connected?: boolean;
  send?(message: unknown, sendHandle: undefined, options: object, callback: (error: Error | null) => void): boolean;
}

/**
 * Sends `message` if the channel is open; false when it is not. A channel can close between that check and
 * the write (the other side exiting mid-drain): without a callback, Node reports that failure as an
 * `error` event, which nothing in a worker group wants to die of, so the failure goes to the callback and
 * is dropped; the other side's exit is handled where exits are.
 */
export function sendQuietly(end: IpcEnd, message: unknown): boolean {
  const open = end.isConnected !== undefined ? end.isConnected() : end.connected === true;
  if (!open || end.send === undefined) return false;
  try {
    return end.send(message, undefined, {}, () => undefined);
  } catch {
    return false;
  }
}
