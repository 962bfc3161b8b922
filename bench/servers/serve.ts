/**
 * The child side of the bench's process protocol: start a server, print `READY {"port":...}` on stdout,
 * and stop cleanly on SIGTERM / SIGINT or when stdin closes (the bench went away).
 */
import { parseArgs } from 'node:util';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import type { ReadyMessage } from '../lib/processes.js';
import { heapProfilePath } from '../lib/heapprofile.js';

/** A started server. */
export interface Served extends ReadyMessage {
  /** Stops it and releases everything it holds. */
  close(): Promise<void>;
}

/** The `--name=value` arguments the bench passes to a server child. */
export function serverArgs(): Record<string, string | undefined> {
  const { values } = parseArgs({ args: process.argv.slice(2), strict: false });
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(values)) out[name] = typeof value === 'string' ? value : undefined;
  return out;
}

/** Reads a required argument, or exits with a message. */
export function requireArg(args: Record<string, string | undefined>, name: string): string {
  const value = args[name];
  if (value === undefined || value === '') {
    process.stderr.write(`missing --${name}\n`);
    process.exit(2);
  }
  return value;
}

/**
 * Profiling on request: with `BENCH_CPU_PROFILE=<file>` set, the first SIGUSR2 starts V8's sampling
 * profiler on the main thread (the bench sends it right before its first measurement, so start-up is left
 * out), and the profile is written to the file when the server stops, with the allocation sample beside it
 * (`heapProfilePath`).
 */
function profiler(): { stop(): Promise<void> } {
  const file = process.env.BENCH_CPU_PROFILE;
  if (file === undefined || file === '') return { stop: async () => {} };
  const session = new Session();
  session.connect();
  let started: Promise<void> | undefined;
  process.on('SIGUSR2', () => {
    // Allocations are sampled beside the CPU: every object allocated counts, the ones the GC already took
    // included, so the summary is what a call allocates, not what it leaves alive.
    started ??= session
      .post('Profiler.enable')
      .then(() => session.post('Profiler.start'))
      .then(() => session.post('HeapProfiler.enable'))
      .then(() => session.post('HeapProfiler.startSampling', { samplingInterval: 16_384, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true }));
  });
  return {
    async stop() {
      if (started === undefined) return;
      await started;
      const { profile } = await session.post('Profiler.stop');
      const { profile: allocations } = await session.post('HeapProfiler.stopSampling');
      writeFileSync(file, JSON.stringify(profile));
      writeFileSync(heapProfilePath(file), JSON.stringify(allocations));
      session.disconnect();
    },
  };
}

/** Runs `start`, announces readiness, and wires the shutdown paths. */
export async function serve(start: () => Promise<Served>): Promise<void> {
  const profile = profiler();
  let served: Served;
  try {
    served = await start();
  } catch (error) {
    process.stderr.write(`failed to start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  }
  let closing = false;
  const shutdown = (): void => {
    if (closing) return;
    closing = true;
    const force = setTimeout(() => process.exit(1), 4_000);
    force.unref();
    served
      .close()
      .then(() => profile.stop())
      .then(
      () => process.exit(0),
      (error: unknown) => {
        process.stderr.write(`close failed: ${String(error)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', shutdown);
  process.on('SIGINT', shutdown);
  process.stdin.on('end', shutdown);
  process.stdin.on('error', shutdown);
  process.stdin.resume();
  const message: ReadyMessage = { port: served.port, pids: served.pids };
  process.stdout.write(`READY ${JSON.stringify(message)}\n`);
}
