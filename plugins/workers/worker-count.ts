import { availableParallelism } from 'node:os';

/** How many workers `n | "auto"` means: `auto` is the cores this process may use (`os.availableParallelism()`). */
export function workerCount(value: number | 'auto' | string): number {
  if (value === 'auto') return availableParallelism();
  const count = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(count) || count < 1) throw new Error(`workers: "${value}" is not a positive whole number or "auto"`);
  return count;
}
