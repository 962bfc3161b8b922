import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** Environment variable that points at an Anvil binary to use instead of the one installed from npm. */
export const ANVIL_BINARY_ENV = 'TOLLGATE_ANVIL_BINARY';

const ARCHES: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64' };

/**
 * The npm package that ships the Anvil binary for this platform, e.g. `@foundry-rs/anvil-linux-amd64`
 * (Node's `x64` is the package's `amd64`).
 */
export function anvilPlatformPackage(platform: NodeJS.Platform = process.platform, arch: string = process.arch): string {
  return `@foundry-rs/anvil-${platform}-${ARCHES[arch] ?? arch}`;
}

/**
 * Finds the Anvil executable: `$TOLLGATE_ANVIL_BINARY` if set, else the binary inside the platform
 * package `@foundry-rs/anvil` installed as an optional dependency, else the `dist/` fallback that
 * package's own launcher uses.
 *
 * @throws Error naming the package to install when no binary is found.
 */
export function resolveAnvilBinary(): string {
  const fromEnv = process.env[ANVIL_BINARY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') return fromEnv;
  const require = createRequire(import.meta.url);
  const name = process.platform === 'win32' ? 'anvil.exe' : 'anvil';
  const pkg = anvilPlatformPackage();
  const candidates: string[] = [];
  try {
    candidates.push(join(dirname(require.resolve(`${pkg}/package.json`)), 'bin', name));
  } catch { /* not installed: try the launcher's fallback */ }
  try {
    candidates.push(join(dirname(require.resolve('@foundry-rs/anvil/package.json')), '..', 'dist', name));
  } catch { /* launcher not installed either */ }
  const found = candidates.find((path) => existsSync(path));
  if (found !== undefined) return found;
  throw new Error(
    `Anvil binary not found: install "@foundry-rs/anvil" (which brings "${pkg}" for ${process.platform}/${process.arch}) ` +
      `or set ${ANVIL_BINARY_ENV}`,
  );
}
