import type BetterSqlite3 from 'better-sqlite3';
import { importPeer } from '../../core/plugin-api.js';

// This plugin's drivers are optional peer dependencies of tollgate: an application installs those of the
// plugins it loads. Loading them here, with top-level await, turns a missing one into an error that names
// the package when the plugin is imported (a static import would fail at link time with Node's message).

/** The `better-sqlite3` package. */
export const betterSqlite3: { readonly default: typeof BetterSqlite3 } = await importPeer('better-sqlite3', () => import('better-sqlite3'), 'tollgate/plugins/ledger-sqlite');
