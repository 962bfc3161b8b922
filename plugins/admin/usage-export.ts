import { utcDay, type KeyRegistry, type UsageRecorder, type UsageRow } from '../../core/store-api.js';
import { keyIdOf, type GatewayConfig } from '../../core/plugin-api.js';
import { KeyManagerError } from './manager-error.js';

/** The formats of a usage export. */
export type UsageExportFormat = 'csv' | 'json';

/** Longest range one export may cover, in days. */
export const MAX_EXPORT_DAYS = 366;

/** The columns of a usage export, in order (the CSV header; the JSON rows' fields, in camel case). */
export const USAGE_EXPORT_COLUMNS = ['day', 'key_id', 'network', 'method', 'calls', 'credits', 'bytes', 'failed'] as const;

/** What a usage export reads. */
export interface UsageExportDeps {
  /** The resolved config: its keys are exported too. */
  readonly config: GatewayConfig;
  /** The managed keys (revoked ones included), if the gateway has a key store. */
  readonly registry: KeyRegistry | undefined;
  /** The usage recorder, which must list rows ({@link UsageRecorder.usageRows}). */
  readonly usage: UsageRecorder;
  /** Time (ms since epoch), for the default day (today). */
  readonly now: () => number;
}

/** What to export: UTC days `YYYY-MM-DD` (each defaults to the other, both to today) and the format (default CSV). */
export interface UsageExportRequest {
  /** First day. */
  readonly from?: string | undefined;
  /** Last day. */
  readonly to?: string | undefined;
  /** `csv` (default) or `json`. */
  readonly format?: string | undefined;
}

/** A usage export ready to be read: its range and format, and its text, produced as it is read. */
export interface UsageExport {
  /** First day. */
  readonly from: string;
  /** Last day. */
  readonly to: string;
  /** The format. */
  readonly format: UsageExportFormat;
  /** The media type to answer with. */
  readonly contentType: string;
  /** A file name for it (`usage-<from>-to-<to>.csv`). */
  readonly fileName: string;
  /** The text, in pieces of a few kilobytes; the store is read as the pieces are taken. */
  readonly chunks: AsyncIterable<string>;
}

const DAY_MS = 86_400_000;
const DAY_PATTERN = /^\d{4}-\d{2}-\d{2}$/;
/** Text is handed out in pieces of about this many characters. */
const CHUNK_CHARS = 16_384;

/**
 * The usage of every key (the config's and the managed ones, revoked included) from `from` to `to`, one
 * row per day, key, network and method, as CSV (a header, then RFC 4180 rows) or JSON
 * (`{ from, to, rows: [...] }`). The request is checked and the keys are listed before anything is
 * produced, so a refusal comes before the first byte; the rows are then read from the store as the text
 * is consumed, never held whole.
 *
 * @throws KeyManagerError `bad_request` (bad days or format, a range over {@link MAX_EXPORT_DAYS}) or
 *   `unavailable` (the store cannot be reached, or its usage recorder cannot list rows).
 */
export async function usageExport(deps: UsageExportDeps, request: UsageExportRequest): Promise<UsageExport> {
  const format = request.format ?? 'csv';
  if (format !== 'csv' && format !== 'json') throw new KeyManagerError('bad_request', `format: must be csv or json (got "${format}")`);
  const today = utcDay(new Date(deps.now()));
  const from = request.from ?? request.to ?? today;
  const to = request.to ?? request.from ?? today;
  for (const [name, day] of [['from', from], ['to', to]] as const) {
    if (!DAY_PATTERN.test(day) || Number.isNaN(Date.parse(`${day}T00:00:00Z`)) || new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) !== day) {
      throw new KeyManagerError('bad_request', `${name}: must be a day YYYY-MM-DD (got "${day}")`);
    }
  }
  const days = (Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS + 1;
  if (days < 1) throw new KeyManagerError('bad_request', 'to: must not be before from');
  if (days > MAX_EXPORT_DAYS) throw new KeyManagerError('bad_request', `at most ${MAX_EXPORT_DAYS} days at once`);
  const recorder = deps.usage;
  if (recorder.usageRows === undefined) throw new KeyManagerError('unavailable', 'this gateway\'s usage recorder cannot list usage (use a store plugin such as ledger-sqlite or ledger-redis)');
  let managed: string[];
  try {
    managed = deps.registry === undefined ? [] : (await deps.registry.list()).map((k) => k.id);
  } catch (error) {
    throw new KeyManagerError('unavailable', `the key store cannot be reached: ${(error as Error).message}`);
  }
  const configIds = deps.config.keys.map((k) => keyIdOf(k.key, k.id));
  const keyIds = [...new Set([...configIds, ...managed])];
  const rows = recorder.usageRows(keyIds, from, to);
  return {
    from,
    to,
    format,
    contentType: format === 'csv' ? 'text/csv; charset=utf-8' : 'application/json',
    fileName: `usage-${from}-to-${to}.${format}`,
    chunks: inPieces(format === 'csv' ? csvOf(rows) : jsonOf(rows, from, to)),
  };
}

async function* csvOf(rows: AsyncIterable<UsageRow>): AsyncGenerator<string> {
  yield `${USAGE_EXPORT_COLUMNS.join(',')}\r\n`;
  for await (const row of rows) {
    yield `${row.day},${csvText(row.keyId)},${csvText(row.network)},${csvText(row.method)},${row.calls},${row.credits},${row.bytes},${row.failed}\r\n`;
  }
}

async function* jsonOf(rows: AsyncIterable<UsageRow>, from: string, to: string): AsyncGenerator<string> {
  yield `{"from":${JSON.stringify(from)},"to":${JSON.stringify(to)},"rows":[`;
  let first = true;
  for await (const row of rows) {
    const { day, keyId, network, method, calls, credits, bytes, failed } = row;
    yield `${first ? '' : ','}\n${JSON.stringify({ day, keyId, network, method, calls, credits, bytes, failed })}`;
    first = false;
  }
  yield `${first ? '' : '\n'}]}\n`;
}

/** Gathers small pieces of text into pieces of about {@link CHUNK_CHARS}. */
async function* inPieces(parts: AsyncIterable<string>): AsyncGenerator<string> {
  let buffered = '';
  for await (const part of parts) {
    buffered += part;
    if (buffered.length >= CHUNK_CHARS) {
      yield buffered;
      buffered = '';
    }
  }
  if (buffered !== '') yield buffered;
}

/**
 * A text cell of CSV (RFC 4180): quoted when it holds a comma, a quote or a line break, quotes doubled.
 * A cell a spreadsheet would take for a formula (starting with `=`, `+`, `-`, `@`, a tab or a carriage
 * return: a method name is whatever a client sent) gets a leading `'` and is quoted, so that opening the
 * export runs nothing.
 */
function csvText(value: string): string {
  const text = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) || text !== value ? `"${text.replace(/"/g, '""')}"` : text;
}
