import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MissingPeerError } from '../../core/plugin-api.js';

/** One file the dashboard serves: its bytes and content type. */
export interface DashboardAsset {
  /** The file's bytes. */
  readonly body: Buffer;
  /** Its `Content-Type`. */
  readonly type: string;
}

const TYPES: Readonly<Record<string, string>> = {
  html: 'text/html; charset=utf-8',
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
};

/** The dashboard's own files, by the name they are served under. */
const OWN_FILES = ['index.html', 'app.js', 'charts.js', 'api.js', 'app.css'] as const;

/**
 * Where the dashboard's files are: `plugins/admin/dashboard/` of the package, found from this module's
 * place whether it runs from the sources (`plugins/admin/`) or compiled (`dist/plugins/admin/`).
 */
export function dashboardDirectory(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, 'dashboard'), join(here, '..', '..', '..', 'plugins', 'admin', 'dashboard')];
  const found = candidates.find((dir) => existsSync(join(dir, 'index.html')));
  if (found === undefined) throw new Error(`the admin dashboard's files are missing (looked in ${candidates.join(', ')})`);
  return found;
}

/**
 * Chart.js's self-contained browser build, from the installed package: an optional peer dependency of
 * tollgate, needed only when the dashboard is served (a missing one is a {@link MissingPeerError}).
 */
function chartJs(): Buffer {
  let entry: string;
  try {
    entry = createRequire(import.meta.url).resolve('chart.js');
  } catch (error) {
    throw new MissingPeerError('chart.js', 'the admin dashboard (tollgate/plugins/admin)', { cause: error });
  }
  return readFileSync(join(dirname(entry), 'chart.umd.js'));
}

/**
 * Reads every file of the dashboard once: its own files, with `{{API}}` in the page replaced by the
 * admin API's prefix, and Chart.js as `chart.umd.js`.
 */
export function loadDashboardAssets(apiPrefix: string): ReadonlyMap<string, DashboardAsset> {
  const dir = dashboardDirectory();
  const assets = new Map<string, DashboardAsset>();
  for (const name of OWN_FILES) {
    let body = readFileSync(join(dir, name));
    if (name === 'index.html') body = Buffer.from(body.toString('utf8').replaceAll('{{API}}', apiPrefix));
    assets.set(name, { body, type: TYPES[name.slice(name.lastIndexOf('.') + 1)]! });
  }
  assets.set('chart.umd.js', { body: chartJs(), type: TYPES.js! });
  return assets;
}
