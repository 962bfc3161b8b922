import { execFileSync } from 'node:child_process';

/** The direct children of `pid`, with their command names (empty when there are none). */
export function childProcesses(pid: number): Array<{ pid: number; command: string }> {
  try {
    return execFileSync('ps', ['-o', 'pid=,comm=', '--ppid', String(pid)], { encoding: 'utf8' })
      .split('\n').map((line) => line.trim()).filter(Boolean)
      .map((line) => { const [p = '', ...rest] = line.split(/\s+/); return { pid: Number(p), command: rest.join(' ') }; });
  } catch {
    return [];
  }
}

/** The pids of the direct children of `pid`. */
export function childPids(pid: number): number[] {
  return childProcesses(pid).map((child) => child.pid);
}

/** Whether a process `pid` exists. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
