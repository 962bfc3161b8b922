/**
 * The highest chain head of each network, shared by every worker and instance of a deployment, so that
 * what a client is told the head is never goes backwards, whichever instance or node answers next.
 */

/**
 * Where a head lives: a network and a scope within it. The empty scope is the network's head (what its
 * probes report, what `latest` means); a family may keep others (a `finalized` head, a commitment level),
 * each with its own floor.
 */
export interface HeadKey {
  /** The network's name. */
  readonly network: string;
  /** The scope within the network; `''` for the network's head. */
  readonly scope: string;
}

/** Called when a shared head rises, from this instance's offer or another's. */
export type HeadListener = (key: HeadKey, head: number) => void;

/**
 * The deployment's shared heads: every instance offers the heads its upstreams show, and learns the
 * highest by a push (never a read per call). A head only rises. The in-memory default shares them within
 * one process; a store plugin (Redis) shares them across processes and instances.
 */
export interface SharedHeads {
  /** Offers a head seen for `key`: raises the shared head when it is higher, else does nothing. Never throws. */
  offer(key: HeadKey, head: number): void;
  /** Calls `listener` whenever a shared head rises (including right after {@link SharedHeads.start} loaded the known ones). */
  onRaise(listener: HeadListener): void;
  /** Loads the heads known for `networks` and starts listening for rises. */
  start?(networks: readonly string[]): Promise<void>;
  /** Stops listening and releases connections. */
  stop?(): Promise<void>;
}

/** A head an answer shows (see `MethodDefinition.answerHead`). */
export interface AnswerHead {
  /** The head, in the family's units (a block number, a slot). */
  readonly head: number;
  /** Its scope (see {@link HeadKey.scope}); default `''`, the network's head. */
  readonly scope?: string;
}
