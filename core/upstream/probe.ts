import type { HealthProbe, Network } from '../contracts/request-context.js';
import type { Upstream, UpstreamReply, UpstreamRequest } from '../contracts/upstream.js';
import { CallContext } from '../context/call-context.js';
import { isJsonRpcProtocol } from '../jsonrpc/json-rpc-protocol.js';
import { encodeRequest } from '../jsonrpc/encode.js';
import { decodeAnswer, type JsonRpcAnswer } from '../jsonrpc/decode.js';
import { asUpstreamFailure } from './classify-failure.js';
import { UpstreamFailure } from '../contracts/upstream-failure.js';

/** What a probe of one upstream found. */
export type ProbeOutcome =
  | {
      /** The upstream answered the probe well. */
      readonly ok: true;
      /** The head it reported (a block height, a slot), when the family reads one. */
      readonly head: number | undefined;
      /** How long it took to answer, ms. */
      readonly latencyMs: number;
    }
  | {
      /** The upstream did not answer the probe well. */
      readonly ok: false;
      /** What went wrong, for logs and the selector's status. */
      readonly problem: string;
      /** The attempt's failure, as the network's protocol classified it; undefined for a node's error answer. */
      readonly failure: UpstreamFailure | undefined;
    };

/** How a probe is sent. */
export interface ProbeOptions {
  /** The probe's timeout, ms. */
  readonly timeoutMs: number;
  /** Aborts the probe. */
  readonly signal?: AbortSignal;
}

/** The probe of a network: the family's health call when the network speaks JSON-RPC, else any answer. */
function probeOf(network: Network): HealthProbe | undefined {
  if (!isJsonRpcProtocol(network.protocol)) return undefined;
  return network.families.find((family) => family.probe !== undefined)?.probe;
}

/** Whether `network` has a health call of its own (so probes can read heads and see sick nodes), not just "any answer". */
export function hasHealthCall(network: Network): boolean {
  return probeOf(network) !== undefined;
}

/**
 * Asks one named upstream whether it can serve: the family's health call (`eth_blockNumber`, `getHealth`)
 * on a JSON-RPC network, else a bare request whose any answer will do (the file-storage API).
 *
 * A probe shares the call path's classification: the upstream's own transport errors
 * (connect, timeout, reset) and the network protocol's `inspect` (HTTP 5xx or 429, a body that is no
 * answer, a provider's capacity error) fail it exactly as they fail a call's attempt. Unlike a call, a
 * node's JSON-RPC error also fails a probe: the call's question was the client's, a probe's is "are
 * you healthy". Whether the outcome feeds a breaker is the caller's choice (the failover selector's
 * probes do; the readiness check does not).
 */
export async function probeUpstream(network: Network, upstream: Upstream, options: ProbeOptions): Promise<ProbeOutcome> {
  const probe = probeOf(network);
  const request: UpstreamRequest = probe === undefined ? { body: '' } : { body: encodeRequest('tollgate-probe', probe.method, probe.params) };
  const ctx = new CallContext(
    { transport: 'probe', network, credentials: { apiKey: undefined }, call: { method: probe?.method ?? 'probe', params: probe?.params ?? [] } },
    Date.now(),
  );
  const started = performance.now();
  let reply: UpstreamReply;
  try {
    reply = await upstream.request(request, options.timeoutMs, options.signal);
  } catch (error) {
    return failed(asUpstreamFailure(error));
  }
  const failure = network.protocol.inspect(reply, ctx);
  if (failure !== undefined) return failed(failure);
  const latencyMs = performance.now() - started;
  if (probe === undefined) return { ok: true, head: undefined, latencyMs };
  let answer: JsonRpcAnswer;
  try {
    answer = decodeAnswer(reply.body as Uint8Array);
  } catch (error) {
    return failed(new UpstreamFailure('bad-response', `upstream answered no JSON-RPC response: ${(error as Error).message}`, { maybeReceived: true, status: reply.status }));
  }
  if (answer.error !== undefined) return { ok: false, problem: `probe answered an error: ${answer.error.message}`, failure: undefined };
  return { ok: true, head: probe.head?.(answer.result), latencyMs };
}

function failed(failure: UpstreamFailure): ProbeOutcome {
  return { ok: false, problem: `probe failed: ${failure.message}`, failure };
}
