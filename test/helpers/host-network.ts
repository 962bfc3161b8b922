/**
 * Separate hosts on one machine, for tests of a fleet: each host is a Linux network namespace with an
 * address of its own (10.213.1.x), all on one bridge, where the test runs as root; otherwise each host
 * is a loopback address (127.0.0.x) of this machine.
 *
 * With namespaces, nothing is added to the machine's own network: the bridge lives in a namespace of its
 * own (the "switch"), each host is joined to it by a veth pair created inside those namespaces, and the
 * only way in from the machine is a process started inside a host (or HAProxy's `namespace` keyword).
 * Deleting the namespaces removes every link with them. A watchdog deletes them if the test process
 * dies without cleaning up (tap's timeout kills it with a signal that skips exit hooks).
 */
import { execFile, spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { existsSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { freePort } from '@tollgate/devnet';

const run = promisify(execFile);

/** One host of a {@link HostNetwork}. */
export interface Host {
  /** The name the test gave it (`gw1`, `redis`...). */
  readonly name: string;
  /** Its address: where its servers listen and how other hosts reach it. */
  readonly address: string;
  /** Its network namespace (as `ip netns` names it), when the network uses namespaces. */
  readonly netns: string | undefined;
  /** Starts a process on this host (inside its namespace, through `ip netns exec`, which execs: the child's pid is the program's). */
  spawn(command: string, args: readonly string[], options?: SpawnOptions): ChildProcess;
  /** A TCP port free on this host's address. */
  port(): Promise<number>;
}

/** Hosts that reach each other by address. */
export interface HostNetwork {
  /** `netns`: a network namespace per host; `loopback`: a 127.0.0.x address per host. */
  readonly kind: 'netns' | 'loopback';
  /** The hosts, in the order their names were given. */
  readonly hosts: readonly Host[];
  /** The host named `name`. */
  host(name: string): Host;
  /** Deletes the namespaces (and with them every link). Idempotent. Processes are the caller's to stop first. */
  close(): Promise<void>;
}

/** Options of {@link startHostNetwork}. */
export interface HostNetworkOptions {
  /** `auto` (default): namespaces when the test may create them, loopback addresses otherwise. */
  readonly kind?: 'auto' | 'netns' | 'loopback';
  /** The third octet of the hosts' 10.213.x.y addresses (default 1). Namespaced networks never see each other, so runs side by side may share it. */
  readonly subnet?: number;
}

const FIRST_HOST = 10;

/** Whether this process may create network namespaces (root, with `ip` and `/var/run/netns` usable). */
export async function namespacesAvailable(): Promise<boolean> {
  if (process.platform !== 'linux' || process.getuid?.() !== 0) return false;
  const probe = `tgprobe${process.pid}`;
  try {
    await run('ip', ['netns', 'add', probe]);
    await run('ip', ['netns', 'del', probe]);
    return true;
  } catch {
    return false;
  }
}

/**
 * Deletes namespaces when this process dies without doing it: a shell holding a pipe from this process
 * runs `ip netns del` for each once the pipe closes. Released (killed) after a clean close.
 */
function namespaceWatchdog(names: readonly string[]): { release(): Promise<void> } {
  const watchdog = spawn('/bin/sh', ['-c', 'read _tollgate; for ns in "$@"; do ip netns del "$ns" 2>/dev/null; done', 'sh', ...names], {
    stdio: ['pipe', 'ignore', 'ignore'],
  });
  watchdog.on('error', () => { /* no sh: the caller's teardown still deletes them */ });
  watchdog.unref();
  watchdog.stdin?.on('error', () => { /* the watchdog went away */ });
  (watchdog.stdin as (Writable & { unref?: () => void }) | null)?.unref?.();
  return {
    async release() {
      if (watchdog.exitCode !== null || watchdog.signalCode !== null) return;
      const gone = new Promise<void>((resolve) => watchdog.once('exit', () => resolve()));
      watchdog.ref();
      watchdog.kill('SIGKILL');
      await gone;
    },
  };
}

async function namespaceNetwork(names: readonly string[], subnet: number): Promise<HostNetwork> {
  const prefix = `tgf${process.pid}`;
  const switchNs = `${prefix}-switch`;
  const namespaces = [switchNs, ...names.map((name) => `${prefix}-${name}`)];
  const watchdog = namespaceWatchdog(namespaces);
  let closed: Promise<void> | undefined;
  const close = (): Promise<void> =>
    (closed ??= (async () => {
      for (const ns of namespaces) {
        if (existsSync(`/var/run/netns/${ns}`)) await run('ip', ['netns', 'del', ns]).catch(() => undefined);
      }
      await watchdog.release();
    })());
  try {
    const ip = (...args: string[]): Promise<unknown> => run('ip', args);
    await ip('netns', 'add', switchNs);
    await ip('-n', switchNs, 'link', 'add', 'br0', 'type', 'bridge');
    await ip('-n', switchNs, 'link', 'set', 'br0', 'up');
    const hosts: Host[] = [];
    let nextPort = 20_000;
    for (const [index, name] of names.entries()) {
      const ns = `${prefix}-${name}`;
      const address = `10.213.${subnet}.${FIRST_HOST + index}`;
      await ip('netns', 'add', ns);
      await ip('-n', ns, 'link', 'set', 'lo', 'up');
      // Both ends are created inside namespaces: the machine's own network never sees them.
      await ip('-n', switchNs, 'link', 'add', `port${index}`, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', ns);
      await ip('-n', switchNs, 'link', 'set', `port${index}`, 'master', 'br0', 'up');
      await ip('-n', ns, 'addr', 'add', `${address}/24`, 'dev', 'eth0');
      await ip('-n', ns, 'link', 'set', 'eth0', 'up');
      hosts.push({
        name,
        address,
        netns: ns,
        spawn: (command, args, options = {}) => spawn('ip', ['netns', 'exec', ns, command, ...args], options),
        // A namespace of the test's own has no other listener: ports are handed out in turn.
        port: () => Promise.resolve(nextPort++),
      });
    }
    return { kind: 'netns', hosts, host: (name) => find(hosts, name), close };
  } catch (error) {
    await close();
    throw error;
  }
}

function loopbackNetwork(names: readonly string[]): HostNetwork {
  const hosts: Host[] = names.map((name, index) => {
    const address = `127.0.0.${FIRST_HOST + index}`;
    return {
      name,
      address,
      netns: undefined,
      spawn: (command, args, options = {}) => spawn(command, args, options),
      port: () => freePort(address),
    };
  });
  return { kind: 'loopback', hosts, host: (name) => find(hosts, name), close: () => Promise.resolve() };
}

function find(hosts: readonly Host[], name: string): Host {
  const host = hosts.find((h) => h.name === name);
  if (host === undefined) throw new Error(`no host named ${name} (hosts: ${hosts.map((h) => h.name).join(', ')})`);
  return host;
}

/** Creates one host per name: network namespaces on a bridge where allowed, loopback addresses otherwise. */
export async function startHostNetwork(names: readonly string[], options: HostNetworkOptions = {}): Promise<HostNetwork> {
  const kind = options.kind ?? 'auto';
  if (kind === 'loopback' || (kind === 'auto' && !(await namespacesAvailable()))) return loopbackNetwork(names);
  return namespaceNetwork(names, options.subnet ?? 1);
}
