import type { Observable } from 'rxjs';
import type { Logger } from 'pino';
import type { GatewayConfig } from '../config/types.js';
import type { Network, NetworkFamily, RequestContext } from '../contracts/request-context.js';
import { NetworkDirectory } from '../network/network-directory.js';
import type { EmbeddedUpstreams } from '../network/embedded-upstreams.js';
import { buildNetworks } from '../network/build-networks.js';
import { createNetworkRpc } from '../network/network-rpc.js';
import { buildPipeline, type BuiltPipeline } from '../pipeline/pipeline.js';
import type { StageDefinition, StageDependencies } from '../contracts/stage.js';
import { createJsonRpcEngine } from '../jsonrpc/json-rpc-engine.js';
import type { ContextInit, GatewayRuntime, KeyCheck } from '../contracts/runtime.js';
import { createKeyCheck } from '../keys/key-check.js';
import type { Drains, UpstreamDrain } from './drains.js';

/**
 * Everything a gateway builds from one configuration, as one value: a reload builds a whole new one and
 * the gateway swaps it in with one assignment. A call, or a connection, that started on a generation
 * keeps its network (and so its upstreams) until it ends; the generation's {@link Generation.drain}
 * closes the upstreams once the generation is retired and nothing runs on it any more.
 */
export interface Generation {
  /** The resolved configuration. */
  readonly config: GatewayConfig;
  /** The families, as registered at start or rebuilt for this configuration ({@link NetworkFamily.reconfigure}). */
  readonly families: ReadonlyMap<string, NetworkFamily>;
  /** The networks, with their upstreams. */
  readonly networks: readonly Network[];
  /** The networks by host and path, for transports. */
  readonly directory: NetworkDirectory;
  /** The stage dependencies with this configuration. */
  readonly deps: StageDependencies;
  /** The stages built for these dependencies. */
  readonly pipeline: BuiltPipeline;
  /** The JSON-RPC engine with this configuration's batch limits. */
  readonly jsonRpc: GatewayRuntime['jsonRpc'];
  /** The key check with this configuration's keys and plans (built on first use: stores open in start). */
  readonly checkKey: KeyCheck;
  /** Usage and observers of a call leaving the pipeline. */
  readonly finishCall: (ctx: RequestContext) => void;
  /** What runs on the generation, and the closing of its upstreams. */
  readonly drain: UpstreamDrain;
  /** What it was built with, which every generation of the gateway shares (a reload builds the next with it). */
  readonly kit: GenerationKit;
}

/** What every generation of one gateway shares: built once, after the plugins started. */
export interface GenerationKit {
  /** The stage dependencies other than the configuration (the stores plugins opened, the selector, …). */
  readonly services: Omit<StageDependencies, 'config'>;
  /** The embedded upstreams (started once, shared by every generation). */
  readonly embedded: EmbeddedUpstreams;
  /** The registered stages. */
  readonly stages: readonly StageDefinition[];
  /** Usage and observers of a call leaving the pipeline. */
  readonly finished: (ctx: RequestContext) => void;
  /** A call's context. */
  readonly createContext: (init: ContextInit) => RequestContext;
  /** The gateway's `execute`, which the JSON-RPC engine runs each call through (it counts the call on its generation). */
  readonly execute: (ctx: RequestContext) => Observable<RequestContext>;
  /** Where each generation's drain is kept until it closes. */
  readonly drains: Drains;
  /** The gateway's logger. */
  readonly logger: Logger;
}

/**
 * Builds a generation for `config` with `families`: the one build of startup and of every reload.
 * Opens the networks' upstream pools (starting embedded upstreams as they are named); on failure,
 * closes what it opened and rejects, so a refused reload changes nothing.
 */
export async function buildGeneration(config: GatewayConfig, families: ReadonlyMap<string, NetworkFamily>, kit: GenerationKit): Promise<Generation> {
  const deps: StageDependencies = { ...kit.services, config };
  const built = await buildNetworks(config, families, kit.embedded, createNetworkRpc(deps));
  let pipeline: BuiltPipeline;
  try {
    pipeline = buildPipeline(deps, kit.stages, kit.finished);
  } catch (error) {
    await Promise.allSettled(built.upstreams.map((u) => u.close()));
    throw error;
  }
  let keyCheck: KeyCheck | undefined;
  return {
    config,
    families,
    networks: built.networks,
    directory: new NetworkDirectory(built.networks),
    deps,
    pipeline,
    jsonRpc: createJsonRpcEngine({
      createContext: kit.createContext,
      execute: kit.execute,
      maxBatchSize: config.server.maxBatchSize,
      batchConcurrency: config.server.batchConcurrency,
      servedByHeader: config.server.servedByHeader,
    }),
    checkKey: (credentials) => (keyCheck ??= createKeyCheck(deps.keys, config, deps.plans))(credentials),
    finishCall: kit.finished,
    drain: kit.drains.adopt(built.networks, built.upstreams),
    kit,
  };
}
