/**
 * Child processes of the bench: every Node server under test runs in a process of its own, so the load
 * generator never shares an event loop with what it measures. (The Anvil upstream comes from the devnet
 * plugin's `startAnvil`, which guards its own child the same way.)
 *
 * Nothing is left behind: children are stopped on normal exit, on Ctrl+C / SIGTERM / SIGHUP and on
 * crashes. Should the bench itself be killed with SIGKILL, each child still goes: it gets a parent-death
 * signal (util-linux `setpriv --pdeathsig`, where available), and the Node servers also exit when their
 * stdin, a pipe from the bench, closes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { dirname, resolve } from 'node:path';
import { existsSync } from 'node:fs';

/** The repository root (the bench runs its children from there). */
export const REPO_ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** What a server child prints on stdout once it serves: one line, `READY ` + this JSON. */
export interface ReadyMessage {
  /** The port it listens on (127.0.0.1). */
  readonly port: number;
  /** Processes whose CPU time counts as this server's (itself, or the binary it wraps). */
  readonly pids: readonly number[];
}

/** A running server child. */
export interface ServerHandle {
  /** Name in logs and errors. */
  readonly name: string;
  /** Base URL, `http://127.0.0.1:<port>`. */
  readonly url: string;
  /** What the child reported when ready. */
  readonly ready: ReadyMessage;
  /** The child's pid. */
  readonly pid: number;
  /** Sends the child a signal (SIGUSR2 starts a requested profile, see servers/serve.ts). */
  signal(signal: NodeJS.Signals): void;
  /** Stops the child: SIGTERM, then SIGKILL after `graceMs`. Idempotent. */
  stop(graceMs?: number): Promise<void>;
}

const children = new Set<ChildProcess>();

function killAllSync(): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  children.clear();
}

/**
 * Stops every child still running: SIGTERM (servers close cleanly and write their profiles), then SIGKILL
 * for whatever is left after `graceMs`.
 */
export async function stopAll(graceMs = 3_000): Promise<void> {
  const running = [...children].filter((c) => c.exitCode === null && c.signalCode === null);
  for (const child of running) child.kill('SIGTERM');
  const timer = setTimeout(killAllSync, graceMs);
  await Promise.all(running.map(exitOf));
  clearTimeout(timer);
}

let installed = false;

/**
 * Installs the handlers that guarantee no child outlives the bench. `cleanup` runs on Ctrl+C / SIGTERM
 * (a graceful stop, so profiles get written); anything still alive after it, or at any exit, is killed.
 */
export function installExitHandlers(cleanup: () => Promise<void>): void {
  if (installed) return;
  installed = true;
  process.on('exit', killAllSync);
  let stopping = false;
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => {
      if (stopping) {
        killAllSync();
        process.exit(130);
      }
      stopping = true;
      process.stderr.write(`\n[bench] ${signal}: stopping servers...\n`);
      const timer = setTimeout(() => process.exit(130), 5_000);
      timer.unref();
      cleanup().finally(() => {
        killAllSync();
        process.exit(130);
      });
    });
  }
  const crash = (error: unknown): void => {
    process.stderr.write(`[bench] fatal: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    killAllSync();
    process.exit(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
}

/** Options of {@link spawnServer}. */
export interface SpawnOptions {
  /** Extra node flags, placed before `--import tsx`. */
  readonly nodeArgs?: readonly string[];
  /** Arguments for the script. */
  readonly args?: readonly string[];
  /** Extra environment. */
  readonly env?: Readonly<Record<string, string>>;
  /** How long to wait for the READY line, ms. */
  readonly readyTimeoutMs?: number;
  /** The checkout the script runs in (default: this one); `--baseline` runs an earlier build's servers. */
  readonly cwd?: string;
}

const SETPRIV = '/usr/bin/setpriv';
const hasSetpriv = existsSync(SETPRIV);

/**
 * Spawns a tracked child (killed when the bench exits). Where util-linux `setpriv` exists, the child is
 * also given a parent-death signal, so even a SIGKILLed bench leaves nothing running.
 */
export function spawnChild(
  command: string,
  args: readonly string[],
  options: { env?: Readonly<Record<string, string>>; deathSignal?: 'SIGTERM' | 'SIGKILL'; cwd?: string } = {},
): ChildProcess {
  const [file, argv] = hasSetpriv
    ? [SETPRIV, ['--pdeathsig', (options.deathSignal ?? 'SIGKILL').slice(3), '--', command, ...args]]
    : [command, [...args]];
  const child = spawn(file, argv, {
    cwd: options.cwd ?? REPO_ROOT,
    env: { ...process.env, ...options.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

/** Resolves when `child` has exited (at once if it already has). */
export function exitOf(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveExit) => child.once('exit', () => resolveExit()));
}

/**
 * Spawns `node --import tsx <script>` (a path relative to the repository root) and waits for it to
 * print `READY {...}`. Its stderr is passed through; its other stdout lines are prefixed with its name.
 */
export function spawnServer(name: string, script: string, options: SpawnOptions = {}): Promise<ServerHandle> {
  // Servers import tollgate by package name: its build in dist/ (as users run it; `npm run bench` builds
  // first), or its sources with TOLLGATE_BENCH_SOURCES=1, to compare the two.
  const sources = process.env.TOLLGATE_BENCH_SOURCES === '1' ? ['--conditions=tollgate-source'] : [];
  const child = spawnChild(process.execPath, [...(options.nodeArgs ?? []), ...sources, '--import', 'tsx', script, ...(options.args ?? [])], {
    env: options.env,
    deathSignal: 'SIGTERM',
    cwd: options.cwd,
  });
  const exited = exitOf(child);
  let stderrTail = '';
  child.stderr!.setEncoding('utf8');
  child.stderr!.on('data', (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-4_000);
    process.stderr.write(chunk.replace(/^(?=.)/gm, `[${name}] `));
  });

  let stopping: Promise<void> | undefined;
  const stop = (graceMs = 5_000): Promise<void> => {
    stopping ??= (async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };

  return new Promise<ServerHandle>((resolveReady, rejectReady) => {
    let ready = false;
    const timer = setTimeout(() => {
      void stop(500);
      rejectReady(new Error(`${name}: no READY line within ${options.readyTimeoutMs ?? 30_000} ms\n${stderrTail}`));
    }, options.readyTimeoutMs ?? 30_000);
    const lines = createInterface({ input: child.stdout! });
    lines.on('line', (line) => {
      if (!ready && line.startsWith('READY ')) {
        ready = true;
        clearTimeout(timer);
        const message = JSON.parse(line.slice('READY '.length)) as ReadyMessage;
        resolveReady({
          name,
          url: `http://127.0.0.1:${message.port}`,
          ready: message,
          pid: child.pid!,
          signal: (signal) => {
            if (child.exitCode === null && child.signalCode === null) child.kill(signal);
          },
          stop,
        });
        return;
      }
      process.stdout.write(`[${name}] ${line}\n`);
    });
    child.once('error', (error) => {
      clearTimeout(timer);
      rejectReady(error);
    });
    child.once('exit', (code, signal) => {
      if (ready) return;
      clearTimeout(timer);
      rejectReady(new Error(`${name} exited before it was ready (code ${code}, signal ${signal})\n${stderrTail}`));
    });
  });
}
