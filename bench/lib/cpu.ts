/**
 * CPU time of processes, from /proc (Linux). On a 2-core machine the load generator, the server and the
 * upstream compete for the same cores, so besides throughput the bench reports how much CPU each server
 * spent per request: the most stable number of a run.
 */
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';

let ticksPerSecond: number | undefined;

function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** CPU seconds a process (or several together) used so far, split into user and kernel time. */
export interface CpuTime {
  readonly user: number;
  readonly system: number;
}

/** CPU time `pid` has used so far; NaN fields when it cannot be read (not Linux, or gone). */
export function cpuTime(pid: number): CpuTime {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which is in parentheses and may contain spaces): utime is the 14th
    // field of the line, stime the 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { user: Number(fields[11]) / clockTicks(), system: Number(fields[12]) / clockTicks() };
  } catch {
    return { user: NaN, system: NaN };
  }
}

/** CPU time of several processes together. */
export function totalCpuTime(pids: readonly number[]): CpuTime {
  let user = 0;
  let system = 0;
  for (const pid of pids) {
    const t = cpuTime(pid);
    user += t.user;
    system += t.system;
  }
  return { user, system };
}

/** `after - before`. */
export function cpuDelta(before: CpuTime, after: CpuTime): CpuTime {
  return { user: after.user - before.user, system: after.system - before.system };
}

/** CPU time of this process (the load generator). */
export function ownCpuTime(): CpuTime {
  const usage = process.cpuUsage();
  return { user: usage.user / 1e6, system: usage.system / 1e6 };
}

/** Number of CPUs the bench may use. */
export function cpuCount(): number {
  return availableParallelism();
}
