/**
 * What a core step returns when the call may go on before its work settles: the stages after it that
 * may run ahead ({@link AHEAD_STAGES}) run meanwhile, and the run waits for `settled` before any other
 * stage and before the call's answer leaves. `meter` returns one for a charge a store answers later, so
 * the node's round trip and the store's overlap; nothing is answered before its credits are taken.
 */
export class RunAhead {
  constructor(
    /** The step's work; its rejection fails the call as the step's own error would. */
    readonly settled: Promise<void>,
  ) {}
}

/**
 * The core stages a call may run while a charge is pending: they read the call and ask the node, and
 * deliver nothing until the answer leaves (`enforceLimits`' hooks, `route`, `dispatch`, `checkResult`).
 * Every other stage (a plugin's, with side effects of its own) waits for the charge first.
 */
export const AHEAD_STAGES: ReadonlySet<string> = new Set(['enforceLimits', 'route', 'dispatch', 'checkResult']);
