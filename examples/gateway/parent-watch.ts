/**
 * Whether the process was started by npm (`npx tollgate start`, `npm exec`, an `npm start` script):
 * npm sets `npm_lifecycle_event` for what it runs.
 */
export function startedByNpm(env: Readonly<Record<string, string | undefined>> = process.env): boolean {
  return env.npm_lifecycle_event !== undefined && env.npm_lifecycle_event !== '';
}

/**
 * Calls `gone` once the process that started this one has exited (this process is then re-parented, so
 * its parent id changes), checking every `intervalMs`. For a gateway started by npm: on SIGTERM npm
 * exits without passing the signal on, and the gateway would keep serving as an orphan; with this, it
 * drains and stops as on SIGTERM. The timer does not keep the process alive. Returns a function that
 * stops watching.
 */
export function watchParent(gone: () => void, intervalMs = 250): () => void {
  const parent = process.ppid;
  const timer = setInterval(() => {
    if (process.ppid === parent) return;
    clearInterval(timer);
    gone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
