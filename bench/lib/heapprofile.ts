/**
 * Summarizes a V8 sampling heap profile (`HeapProfiler.stopSampling`, objects the GC already took
 * included): how many bytes the server allocated while measured, by phase of a call (the rules of
 * `phases.ts`) and by function, so allocations per call can be counted and cut like CPU time.
 */
import { readFileSync } from 'node:fs';
import { locationOf, originOf } from './frames.js';
import { phaseOfFile, phaseOfOrigin } from './phases.js';

interface HeapNode {
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  /** Bytes allocated by this frame itself (V8 scales the samples to an estimate of every allocation). */
  readonly selfSize: number;
  readonly children: readonly HeapNode[];
}

/** An allocation summary. */
export interface AllocationSummary {
  /** Estimated bytes allocated while sampled. */
  readonly bytes: number;
  /** Bytes by phase of a call, biggest first. */
  readonly byPhase: ReadonlyArray<{ readonly phase: string; readonly bytes: number }>;
  /** The functions that allocated the most, biggest first. */
  readonly top: ReadonlyArray<{ readonly name: string; readonly location: string; readonly bytes: number }>;
}

/** Where the allocation profile of a CPU profile file is written: beside it, `.heapprofile` for `.cpuprofile`. */
export function heapProfilePath(cpuProfile: string): string {
  return cpuProfile.replace(/\.cpuprofile$/, '') + '.heapprofile';
}

/** Reads and summarizes an allocation profile. */
export function summarizeAllocations(file: string, top = 10): AllocationSummary {
  const { head } = JSON.parse(readFileSync(file, 'utf8')) as { head: HeapNode };
  const byPhase = new Map<string, number>();
  const byFunction = new Map<string, { name: string; location: string; bytes: number }>();
  let bytes = 0;
  const walk = (node: HeapNode, inherited: string | undefined): void => {
    const { functionName, url, lineNumber } = node.callFrame;
    const path = url === '' ? '' : locationOf(url);
    const named = url === '' || url.startsWith('node:') ? undefined : phaseOfFile(path);
    // As for CPU samples, the nearest phase frame wins: a frame's own phase over its callers'.
    const phase = named ?? inherited;
    if (node.selfSize > 0) {
      bytes += node.selfSize;
      const charged = phase ?? phaseOfOrigin(originOf(functionName, url));
      byPhase.set(charged, (byPhase.get(charged) ?? 0) + node.selfSize);
      const location = url === '' ? '' : /\.[cm]?ts$/.test(path) ? path : `${path}:${lineNumber + 1}`;
      const key = `${functionName}@${location}`;
      const entry = byFunction.get(key) ?? { name: functionName || '(anonymous)', location, bytes: 0 };
      entry.bytes += node.selfSize;
      byFunction.set(key, entry);
    }
    for (const child of node.children) walk(child, phase);
  };
  walk(head, undefined);
  return {
    bytes,
    byPhase: [...byPhase].sort((a, b) => b[1] - a[1]).map(([phase, phaseBytes]) => ({ phase, bytes: phaseBytes })),
    top: [...byFunction.values()].sort((a, b) => b.bytes - a.bytes).slice(0, top),
  };
}

/** Renders a summary as text, in bytes per request. */
export function formatAllocations(summary: AllocationSummary, requests: number): string {
  const per = (value: number): string => `${(value / requests).toFixed(0).padStart(7)} B/req`;
  const lines = [`  allocated: ${per(summary.bytes).trim()} (sampled, objects already collected included); by phase of a call:`];
  for (const p of summary.byPhase) lines.push(`    ${per(p.bytes)}  ${p.phase}`);
  lines.push('  top allocating functions:');
  for (const f of summary.top) lines.push(`    ${per(f.bytes)}  ${f.name.padEnd(34)} ${f.location}`);
  return lines.join('\n');
}
