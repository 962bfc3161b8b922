/**
 * Summarizes a V8 `.cpuprofile` (from `node --cpu-prof`): where the busy time went, by function (self
 * time) and by origin (the project's core and plugins, each dependency, Node's internals, GC).
 */
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { REPO_ROOT } from './processes.js';
import { locationOf, originOf } from './frames.js';
import { phaseOfFile, phaseOfOrigin } from './phases.js';
import { formatAllocations, type AllocationSummary } from './heapprofile.js';

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
  /** Busy time by phase of a call (see `phases.ts`: each sample goes to the nearest frame a phase names), biggest first. */
  readonly byPhase: ReadonlyArray<{ readonly phase: string; readonly selfMs: number; readonly share: number }>;
  /** The functions with the most self time. */
  readonly top: readonly HotFunction[];
  /** What the server allocated while profiled, when its allocation profile was written. */
  readonly allocations?: AllocationSummary;
  /** Requests served while profiled, when known (to show costs per request). */
  readonly requests?: number;
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
  const byPhase = new Map<string, number>();
  const phaseOf = phasesOf(profile, nodes);
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
    const phase = phaseOf(id);
    byPhase.set(phase, (byPhase.get(phase) ?? 0) + micros);
  }
  const busy = total - idle;
  return {
    file,
    totalMs: total / 1000,
    busyMs: busy / 1000,
    byOrigin: [...byOrigin]
      .sort((a, b) => b[1] - a[1])
      .map(([origin, micros]) => ({ origin, selfMs: micros / 1000, share: micros / busy })),
    byPhase: [...byPhase]
      .sort((a, b) => b[1] - a[1])
      .map(([phase, micros]) => ({ phase, selfMs: micros / 1000, share: micros / busy })),
    top: [...byFunction.values()]
      .sort((a, b) => b.self - a.self)
      .slice(0, top)
      .map((f) => ({ name: f.name, location: f.location, origin: f.origin, selfMs: f.self / 1000, share: f.self / busy })),
  };
}

/** The phase of each sampled node: the nearest frame up its stack that a phase names, else its own origin's (memoized per node). */
function phasesOf(profile: CpuProfile, nodes: ReadonlyMap<number, ProfileNode>): (id: number) => string {
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  const named = new Map<number, string | undefined>();
  const nearest = (id: number): string | undefined => {
    if (named.has(id)) return named.get(id);
    const frame = nodes.get(id)!.callFrame;
    const own = frame.url === '' || frame.url.startsWith('node:') ? undefined : phaseOfFile(locationOf(frame.url));
    const parent = parents.get(id);
    const phase = own ?? (parent === undefined ? undefined : nearest(parent));
    named.set(id, phase);
    return phase;
  };
  return (id) => {
    const frame = nodes.get(id)!.callFrame;
    return nearest(id) ?? phaseOfOrigin(originOf(frame.functionName, frame.url));
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
  lines.push('  busy time by phase of a call:');
  for (const p of summary.byPhase) lines.push(`    ${cost(p.share)}  ${p.phase}`);
  lines.push('  top self time:');
  for (const f of summary.top) lines.push(`    ${cost(f.share)}  ${f.name.padEnd(34)} ${f.location || f.origin}`);
  if (summary.allocations !== undefined && summary.requests !== undefined && summary.requests > 0) lines.push(formatAllocations(summary.allocations, summary.requests));
  return lines.join('\n');
}

function shownFile(file: string): string {
  return relative(REPO_ROOT, file) || file;
}
