/**
 * A long-running program on a {@link Host} of a test's host network, started in a process group of its
 * own so that a whole instance (a primary and its workers) can be killed at once, and never outliving the
 * test: an exit hook and a watchdog (a shell holding a pipe from the test process) kill its group when
 * the test process ends, whichever way it ends.
 */
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { spawn } from 'node:child_process';
import type { Writable } from 'node:stream';
import type { Host } from './host-network.js';
import { until } from './until.js';

/** A program started by {@link startHostProcess}. */
export interface HostProcess {
  readonly host: Host;
  readonly child: ChildProcess;
  /** Its pid, which leads its process group. */
  readonly pid: number;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  /** Whether it has exited. */
  exited(): boolean;
  /** Sends `signal` to the program alone. */
  signal(signal: NodeJS.Signals): void;
  /** SIGKILLs its whole process group (the program and every process it started) and waits for the program's exit. */
  killGroup(): Promise<void>;
  /** SIGTERM, waits for the exit (SIGKILL to the group after `graceMs`); resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

const groups = new Set<number>();
let hookInstalled = false;

function killGroup(pid: number): void {
  try { process.kill(-pid, 'SIGKILL'); } catch { /* already gone */ }
}

function groupWatchdog(pid: number): { release(): void } {
  const watchdog = spawn('/bin/sh', ['-c', 'read _tollgate; kill -9 "-$0" 2>/dev/null', String(pid)], { stdio: ['pipe', 'ignore', 'ignore'] });
  watchdog.on('error', () => { /* no sh: the exit hook still applies */ });
  watchdog.unref();
  watchdog.stdin?.on('error', () => { /* the watchdog went away */ });
  (watchdog.stdin as (Writable & { unref?: () => void }) | null)?.unref?.();
  return { release: () => void watchdog.kill('SIGKILL') };
}

/**
 * Starts `command args` on `host` in a new process group and waits until its output matches `ready`
 * (or fails with its output when it exits first or `timeoutMs` passes). With `stdin: 'pipe'`, `child.stdin`
 * writes to it.
 */
export async function startHostProcess(host: Host, command: string, args: readonly string[], ready: RegExp, options: SpawnOptions & { timeoutMs?: number; stdin?: 'pipe' | 'ignore' } = {}): Promise<HostProcess> {
  if (!hookInstalled) {
    hookInstalled = true;
    process.on('exit', () => groups.forEach(killGroup));
  }
  const child = host.spawn(command, args, { ...options, detached: true, stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'] });
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start ${command} on ${host.name}`);
  groups.add(pid);
  const watchdog = groupWatchdog(pid);
  let text = '';
  child.stdout!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (text += chunk.toString()));
  const exited = (): boolean => child.exitCode !== null || child.signalCode !== null;
  const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.once('exit', () => {
    // The group may hold workers still: they go with their leader.
    killGroup(pid);
    groups.delete(pid);
    watchdog.release();
  });
  const kill = async (): Promise<void> => {
    killGroup(pid);
    await gone;
  };
  try {
    await until(`${command} on ${host.name} to be ready`, () => {
      if (exited()) throw new Error(`${command} on ${host.name} exited (${child.exitCode ?? child.signalCode}) before it was ready: ${text}`);
      return ready.test(text);
    }, options.timeoutMs ?? 90_000, 25);
  } catch (error) {
    await kill();
    throw new Error(`${(error as Error).message}\n${text}`);
  }
  return {
    host,
    child,
    pid,
    output: () => text,
    exited,
    signal: (signal) => void child.kill(signal),
    killGroup: kill,
    async stop(graceMs = 15_000) {
      if (!exited()) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => killGroup(pid), graceMs);
        await gone;
        clearTimeout(timer);
      }
      return child.exitCode;
    },
  };
}
