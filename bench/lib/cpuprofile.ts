/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): where the busy time went, by function (self
 * time) and by origin (the project's core and plugins, each dependency, Node's internals, GC).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { relative } from 'node:path';
import { REPO_ROOT } from './processes.js';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number; readonly columnNumber: number };
  readonly children?: readonly number[];
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

/** One function's self time. */
export interface HotFunction {
  /** Function name (`(anonymous)` when it has none). */
  readonly name: string;
  /** Where: `path:line` relative to the repository, or a `node:` module. */
  readonly location: string;
  /** Where the time is attributed (see {@link originOf}). */
  readonly origin: string;
  /** Self time, ms. */
  readonly selfMs: number;
  /** Share of the busy (non-idle) time. */
  readonly share: number;
}

/** A profile's summary. */
export interface ProfileSummary {
  /** Profile file. */
  readonly file: string;
  /** Sampled wall time, ms. */
  readonly totalMs: number;
  /** Time not idle, ms. */
  readonly busyMs: number;
  /** Busy time by origin, biggest first. */
  readonly byOrigin: ReadonlyArray<{ readonly origin: string; readonly selfMs: number; readonly share: number }>;
  /** The functions with the most self time. */
  readonly top: readonly HotFunction[];
  /** Requests served while profiled, when known (to show costs per request). */
  readonly requests?: number;
}

function locationOf(url: string): string {
  if (url === '') return '';
  if (url.startsWith('file://')) {
    try {
      return relative(REPO_ROOT, fileURLToPath(url));
    } catch {
      return url;
    }
  }
  return url;
}

/**
 * What a frame belongs to: `tollgate core/<dir>`, `tollgate plugins/<name>`, `bench`, a dependency's
 * package name, `node internals`, or a V8 pseudo-frame (`(garbage collector)`, `(program)`).
 */
export function originOf(functionName: string, url: string): string {
  if (url === '') return functionName.startsWith('(') ? functionName : 'native';
  if (url.startsWith('node:')) return 'node internals';
  const path = locationOf(url);
  const modules = path.lastIndexOf('node_modules/');
  if (modules !== -1) {
    const parts = path.slice(modules + 'node_modules/'.length).split('/');
    return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0]!;
  }
  const parts = path.split('/');
  if (parts[0] === 'core') return parts.length > 2 ? `tollgate core/${parts[1]}` : 'tollgate core';
  if (parts[0] === 'plugins') return `tollgate plugins/${parts[1]}`;
  if (parts[0] === 'bench') return 'bench';
  return path;
}

/** Reads and summarizes a profile. */
export function summarizeProfile(file: string, top = 15): ProfileSummary {
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfByNode = new Map<number, number>();
  // timeDeltas[i] is the time before sample i; attribute each delta to the sample it precedes (V8's convention as DevTools reads it).
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i]!;
    selfByNode.set(id, (selfByNode.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  }
  const byFunction = new Map<string, { name: string; location: string; origin: string; self: number }>();
  const byOrigin = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, micros] of selfByNode) {
    const frame = nodes.get(id)!.callFrame;
    total += micros;
    if (frame.functionName === '(idle)') {
      idle += micros;
      continue;
    }
    const origin = originOf(frame.functionName, frame.url);
    // tsx compiles TypeScript with whitespace minified: line numbers in .ts files mean nothing.
    const path = locationOf(frame.url);
    const location = frame.url === '' ? '' : /\.[cm]?ts$/.test(path) ? path : `${path}:${frame.lineNumber + 1}`;
    const key = `${frame.functionName}@${location}`;
    const entry = byFunction.get(key) ?? { name: frame.functionName || '(anonymous)', location, origin, self: 0 };
    entry.self += micros;
    byFunction.set(key, entry);
    byOrigin.set(origin, (byOrigin.get(origin) ?? 0) + micros);
  }
  const busy = total - idle;
  return {
    file,
    totalMs: total / 1000,
    busyMs: busy / 1000,
    byOrigin: [...byOrigin]
      .sort((a, b) => b[1] - a[1])
      .map(([origin, micros]) => ({ origin, selfMs: micros / 1000, share: micros / busy })),
    top: [...byFunction.values()]
      .sort((a, b) => b.self - a.self)
      .slice(0, top)
      .map((f) => ({ name: f.name, location: f.location, origin: f.origin, selfMs: f.self / 1000, share: f.self / busy })),
  };
}

/** Renders a summary as text (with microseconds per request when the request count is known). */
export function formatProfile(title: string, summary: ProfileSummary, origins = 12): string {
  const perRequest = summary.requests !== undefined && summary.requests > 0 ? (summary.busyMs * 1000) / summary.requests : undefined;
  const cost = (share: number): string =>
    `${(share * 100).toFixed(1).padStart(5)}%${perRequest === undefined ? '' : ` ${(share * perRequest).toFixed(1).padStart(6)} us/req`}`;
  const head = `${title}: ${summary.busyMs.toFixed(0)} ms busy of ${summary.totalMs.toFixed(0)} ms sampled` +
    (perRequest === undefined ? '' : `, ${summary.requests} requests, ${perRequest.toFixed(1)} us busy/req`) + ` (${shownFile(summary.file)})`;
  const lines = [head, '  busy time by origin:'];
  for (const o of summary.byOrigin.slice(0, origins)) lines.push(`    ${cost(o.share)}  ${o.origin}`);
  lines.push('  top self time:');
  for (const f of summary.top) lines.push(`    ${cost(f.share)}  ${f.name.padEnd(34)} ${f.location || f.origin}`);
  return lines.join('\n');
}

function shownFile(file: string): string {
  return relative(REPO_ROOT, file) || file;
}
