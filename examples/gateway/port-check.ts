import { createServer } from 'node:net';

/**
 * Why the gateway could not listen on `host:port`, found before anything else starts (embedded nodes
 * take seconds, and a busy port would otherwise surface after them); undefined when it can. Port 0
 * always can. `flag` is the option that chooses that port, for the advice. Another process may still take the port in between: `listen` then fails as usual.
 */
export function portProblem(host: string, port: number, flag = '--port'): Promise<string | undefined> {
  if (port === 0) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => {
      const where = `${host.includes(':') ? `[${host}]` : host}:${port}`;
      if (error.code === 'EADDRINUSE') resolve(`tollgate: ${where} is already in use: stop what holds it, or choose another port with ${flag} <n>`);
      else if (error.code === 'EACCES') resolve(`tollgate: no permission to listen on ${where}: choose a port above 1023 with ${flag} <n>`);
      else resolve(`tollgate: cannot listen on ${where}: ${error.message}`);
    });
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(undefined)));
  });
}
