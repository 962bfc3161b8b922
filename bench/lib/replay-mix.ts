/**
 * A replayed mix of reads for the cache scenario: a fixed sequence of block, receipt, log and call reads
 * with a skew towards recent blocks (as explorers and wallets read them), sent by `connections` workers
 * that each take the next call of the sequence, so both targets answer exactly the same calls.
 */
import { Pool } from 'undici';
import { cpuDelta, totalCpuTime } from './cpu.js';

/** One call of the mix. */
export interface MixCall {
  readonly method: string;
  readonly params: readonly unknown[];
}

/** What the chain offers to read. */
export interface MixChain {
  /** Heights of the mined blocks. */
  readonly blocks: readonly number[];
  /** Hashes of mined transactions. */
  readonly transactions: readonly string[];
  /** An address to call. */
  readonly callee: string;
}

/** A small deterministic PRNG (mulberry32), so every run replays the same sequence. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `length` calls: 40% blocks, 25% receipts, 15% log ranges, 10% calls, 10% the block number. */
export function mixSequence(chain: MixChain, length: number, seed = 17): MixCall[] {
  const next = random(seed);
  // Recent items are read most: the square of a uniform value leans towards the end of the list.
  const recent = <T>(items: readonly T[]): T => items[items.length - 1 - Math.floor(next() ** 2 * items.length)]!;
  const hex = (n: number): string => `0x${n.toString(16)}`;
  const calls: MixCall[] = [];
  for (let i = 0; i < length; i++) {
    const roll = next();
    if (roll < 0.4) calls.push({ method: 'eth_getBlockByNumber', params: [hex(recent(chain.blocks)), false] });
    else if (roll < 0.65) calls.push({ method: 'eth_getTransactionReceipt', params: [recent(chain.transactions)] });
    else if (roll < 0.8) {
      const to = recent(chain.blocks);
      calls.push({ method: 'eth_getLogs', params: [{ fromBlock: hex(Math.max(0, to - 4)), toBlock: hex(to) }] });
    } else if (roll < 0.9) calls.push({ method: 'eth_call', params: [{ to: chain.callee, data: '0x' }, hex(recent(chain.blocks))] });
    else calls.push({ method: 'eth_blockNumber', params: [] });
  }
  return calls;
}

/** What replaying the sequence measured. */
export interface MixResult {
  readonly calls: number;
  readonly seconds: number;
  readonly okPerSecond: number;
  readonly failures: number;
  readonly hits: number;
  readonly misses: number;
  readonly latency: { readonly p50: number; readonly p99: number };
  readonly serverMicrosPerRequest: number;
  /** Up to 3 examples of failed answers. */
  readonly samples: readonly string[];
}

/** Replays `calls` against `url` with `connections` workers; `serverPids` are the target's processes. */
export async function replayMix(url: string, path: string, calls: readonly MixCall[], connections: number, serverPids: readonly number[]): Promise<MixResult> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  const latencies: number[] = [];
  let failures = 0;
  const samples: string[] = [];
  let hits = 0;
  let misses = 0;
  let cursor = 0;
  const cpuBefore = totalCpuTime(serverPids);
  const started = performance.now();
  const worker = async (): Promise<void> => {
    while (cursor < calls.length) {
      const index = cursor++;
      const call = calls[index]!;
      const body = JSON.stringify({ jsonrpc: '2.0', id: index, method: call.method, params: call.params });
      const t0 = performance.now();
      const answer = await pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json' }, body });
      const text = await answer.body.text();
      latencies.push(performance.now() - t0);
      const cache = answer.headers['x-tollgate-cache'];
      if (cache === 'hit') hits++;
      else if (cache === 'miss') misses++;
      const parsed = JSON.parse(text) as { id?: unknown; result?: unknown };
      if (answer.statusCode !== 200 || parsed.id !== index || parsed.result === undefined) {
        failures++;
        if (samples.length < 3) samples.push(`${call.method}: HTTP ${answer.statusCode} ${text.slice(0, 160)}`);
      }
    }
  };
  await Promise.all(Array.from({ length: connections }, worker));
  const seconds = (performance.now() - started) / 1000;
  const cpu = cpuDelta(cpuBefore, totalCpuTime(serverPids));
  await pool.close();
  latencies.sort((a, b) => a - b);
  const at = (q: number): number => latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))]!;
  return {
    calls: calls.length,
    seconds,
    okPerSecond: (calls.length - failures) / seconds,
    failures,
    hits,
    misses,
    latency: { p50: at(0.5), p99: at(0.99) },
    serverMicrosPerRequest: ((cpu.user + cpu.system) * 1e6) / calls.length,
    samples,
  };
}
