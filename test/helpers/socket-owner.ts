import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** `127.0.0.1:port` as /proc/net/tcp writes it (IPv4 little-endian hex, port big-endian hex). */
function loopbackHex(port: number): string {
  return `0100007F:${port.toString(16).toUpperCase().padStart(4, '0')}`;
}

/**
 * Which of `pids` holds the server side of the loopback TCP connection from client port `clientPort` to
 * `serverPort` (Linux: the socket's inode in /proc/net/tcp, found among each process's descriptors), or
 * undefined. With `node:cluster` round robin, the primary accepts a connection and hands it to one
 * worker: that worker alone holds it.
 */
export function socketOwner(serverPort: number, clientPort: number, pids: readonly number[]): number | undefined {
  const local = loopbackHex(serverPort);
  const remote = loopbackHex(clientPort);
  const row = readFileSync('/proc/net/tcp', 'utf8').split('\n').map((line) => line.trim().split(/\s+/)).find((cols) => cols[1] === local && cols[2] === remote);
  if (row === undefined) return undefined;
  const link = `socket:[${row[9]}]`;
  for (const pid of pids) {
    try {
      for (const fd of readdirSync(`/proc/${pid}/fd`)) {
        try {
          if (readlinkSync(`/proc/${pid}/fd/${fd}`) === link) return pid;
        } catch {
          // The descriptor closed while we looked.
        }
      }
    } catch {
      // The process is gone.
    }
  }
  return undefined;
}
