/** Polls `condition` every `stepMs` until it holds; fails after `timeoutMs` with `what`. */
export async function until(what: string, condition: () => boolean | Promise<boolean>, timeoutMs = 20_000, stepMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, stepMs));
  }
}

/**
 * Resolves with `read()`'s value once it has held still for `quietMs` (polled every 50 ms), or fails after
 * `timeoutMs`. For a count that stops growing when a bound takes hold, where no event announces it.
 */
export async function steady(what: string, read: () => number | Promise<number>, quietMs: number, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  let value = await read();
  let since = Date.now();
  while (Date.now() - started < timeoutMs) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    const next = await read();
    if (next !== value) {
      value = next;
      since = Date.now();
    } else if (Date.now() - since >= quietMs) {
      return value;
    }
  }
  throw new Error(`${what} kept changing for ${timeoutMs} ms (last ${value})`);
}
