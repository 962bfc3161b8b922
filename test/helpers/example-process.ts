/**
 * Runs an example exactly as its README says: the `start` script of `examples/<name>/package.json`,
 * from the example's folder, with `PORT=0`. An example prints `Listening on http://HOST:PORT` once it
 * serves; SIGTERM must make it exit 0 after a clean shutdown.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** A running example. */
export interface ExampleProcess {
  readonly child: ChildProcess;
  /** `http://127.0.0.1:<port>`, as the example printed it. */
  readonly origin: string;
  /** Everything the example wrote so far (stdout and stderr). */
  output(): string;
  /** SIGTERM, and waits for the exit; resolves with the exit code (null when killed by a signal). */
  stop(): Promise<number | null>;
}

/** The folder of `examples/<name>`. */
export function exampleDir(name: string): string {
  return fileURLToPath(new URL(`../../examples/${name}/`, import.meta.url));
}

/** The command line of the example's `npm start`, split into words (no shell features are used). */
export function startCommand(name: string): string[] {
  const pkg = JSON.parse(readFileSync(`${exampleDir(name)}package.json`, 'utf8')) as { scripts?: { start?: string } };
  const start = pkg.scripts?.start;
  if (start === undefined) throw new Error(`examples/${name}/package.json has no start script`);
  return start.trim().split(/\s+/);
}

function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

/** Starts `examples/<name>` with its start script and waits for its `Listening on` line. */
export async function startExample(name: string, env: Record<string, string> = {}, timeoutMs = 90_000): Promise<ExampleProcess> {
  const [command, ...args] = startCommand(name);
  // The start script resolves `tollgate` to its build, as an installed package would; the tests run the
  // sources instead, so that they need no build.
  const node = command === 'node';
  return startServing(`examples/${name}`, exampleDir(name), node ? process.execPath : command!, node ? ['--conditions=tollgate-source', ...args] : args, env, timeoutMs);
}

/** Runs `command args` in `cwd` with `PORT=0` and waits for its `Listening on` line. */
export async function startServing(name: string, cwd: string, command: string, args: readonly string[], env: Record<string, string> = {}, timeoutMs = 90_000): Promise<ExampleProcess> {
  const child = spawn(command, args, {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, PORT: '0', ...env },
  });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const origin = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error(`${name} did not start: ${output}`)); }, timeoutMs);
    const onData = (): void => {
      const listening = /Listening on (http:\/\/[^\s/]+)/.exec(output);
      if (listening === null) return;
      clearTimeout(timer);
      child.stdout!.off('data', onData);
      child.off('exit', onExit);
      resolve(listening[1]!);
    };
    const onExit = (code: number | null): void => { clearTimeout(timer); reject(new Error(`${name} exited with ${code}: ${output}`)); };
    child.stdout!.on('data', onData);
    child.once('exit', onExit);
  });
  return {
    child,
    origin,
    output: () => output,
    async stop() {
      child.kill('SIGTERM');
      return exited(child);
    },
  };
}
