import { spawn, type ChildProcess } from 'node:child_process';
import type { Writable } from 'node:stream';

const guarded = new Set<ChildProcess>();
let exitHookInstalled = false;

function killGuardedOnExit(): void {
  for (const child of guarded) {
    try { child.kill('SIGKILL'); } catch { /* already gone */ }
  }
  guarded.clear();
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', killGuardedOnExit);
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

/** Resolves once `child` has exited and Node has reaped it (so its pid no longer exists). */
export function waitForExit(child: ChildProcess): Promise<void> {
  if (exited(child)) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** What {@link guardChild} returns: call `release` before stopping the child yourself. */
export interface ChildGuard {
  /** The pid of the watchdog process, if one runs (not on Windows). */
  readonly watchdogPid: number | undefined;
  /** Stops guarding: ends the watchdog and drops the exit hook's reference. Idempotent. */
  release(): Promise<void>;
}

/**
 * Makes sure a child process does not outlive this one:
 * - a `process.on('exit')` hook SIGKILLs every guarded child when Node exits (normal exit, `process.exit`,
 *   uncaught exception);
 * - where `/bin/sh` exists, a tiny watchdog (`sh -c 'read _; kill -9 PID'`) holds a pipe from this
 *   process: if Node dies without running exit hooks (SIGKILL, an unhandled SIGTERM), the pipe closes and
 *   the watchdog kills the child.
 *
 * Both are unref'd: a guarded child never keeps Node alive on its own.
 */
export function guardChild(child: ChildProcess): ChildGuard {
  installExitHook();
  guarded.add(child);
  child.once('exit', () => guarded.delete(child));

  let watchdog: ChildProcess | undefined;
  if (process.platform !== 'win32' && child.pid !== undefined) {
    try {
      watchdog = spawn('/bin/sh', ['-c', 'read _tollgate; kill -9 "$0" 2>/dev/null', String(child.pid)], {
        stdio: ['pipe', 'ignore', 'ignore'],
      });
      watchdog.on('error', () => { /* no sh: the exit hook still applies */ });
      guarded.add(watchdog);
      const w = watchdog;
      w.once('exit', () => guarded.delete(w));
      w.unref();
      w.stdin?.on('error', () => { /* the watchdog went away */ });
      (w.stdin as (Writable & { unref?: () => void }) | null)?.unref?.();
    } catch {
      watchdog = undefined;
    }
  }

  let released: Promise<void> | undefined;
  return {
    watchdogPid: watchdog?.pid,
    release() {
      released ??= (async () => {
        if (watchdog?.pid !== undefined && !exited(watchdog)) {
          const done = waitForExit(watchdog);
          watchdog.ref(); // keep Node alive until it is reaped
          watchdog.kill('SIGKILL');
          await done;
        }
      })();
      return released;
    },
  };
}
