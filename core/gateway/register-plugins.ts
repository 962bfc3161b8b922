import type { DependencyContainer, InjectionToken } from 'tsyringe';
import { ConfigError } from '../config/load-config.js';
import type { GatewayConfig } from '../config/types.js';
import { protectedNamespaces, unknownMethodsProblems } from '../config/unknown-methods.js';
import { PluginError, type PluginErrorCode } from '../plugin/plugin-error.js';
import type { NetworkFamily } from '../contracts/request-context.js';
import { Tokens, type EmbeddedUpstreamProvider, type TollgatePlugin } from '../contracts/plugin.js';
import type { StageDefinition } from '../contracts/stage.js';
import { orderStages } from '../pipeline/pipeline.js';

/** One problem found while assembling a gateway: its line, and whether it is about the configuration's values. */
interface AssemblyProblem {
  readonly line: string;
  /** About the configuration's values (a plugin's settings, a family or embedded upstream no plugin provides): the whole assembly fails as a ConfigError when all are. */
  readonly config: boolean;
  readonly code: PluginErrorCode;
  readonly plugin: string | undefined;
  readonly cause: unknown;
}

/** What registering the plugins found: the families, and every problem (empty when the gateway can start). */
export interface Assembly {
  /** The network families the plugins provide, by name. */
  readonly families: Map<string, NetworkFamily>;
  /** Every problem, in plugin order, then the cross-checks'. */
  readonly problems: readonly AssemblyProblem[];
}

function resolveAllOptional<T>(container: DependencyContainer, token: InjectionToken<T>): T[] {
  return container.isRegistered(token, true) ? container.resolveAll<T>(token) : [];
}

function fromError(error: unknown, plugin: string | undefined, prefix: string): AssemblyProblem[] {
  if (error instanceof ConfigError) return error.problems.map((line) => ({ line, config: true, code: 'PLUGIN_INVALID', plugin, cause: error }));
  if (PluginError.is(error)) return [{ line: error.message, config: false, code: error.code, plugin: error.plugin ?? plugin, cause: error }];
  return [{ line: `${prefix}${(error as Error)?.message ?? String(error)}`, config: false, code: 'PLUGIN_INVALID', plugin, cause: error }];
}

/**
 * Registers every plugin into `container` and checks what needs them all, collecting every problem
 * rather than stopping at the first: plugin names and dependencies, each plugin's settings, families
 * registered twice, the families and embedded upstreams the networks name, what the networks' forward
 * policies would open against what their families protect, the stages' order. Nothing
 * here opens a file or a socket.
 */
export function assemble(container: DependencyContainer, plugins: readonly TollgatePlugin[], config: GatewayConfig): Assembly {
  const problems: AssemblyProblem[] = [];
  const conflict = (line: string, plugin?: string): void => void problems.push({ line, config: false, code: 'PLUGIN_CONFLICT', plugin, cause: undefined });
  const names = new Set<string>();
  for (const plugin of plugins) {
    if (names.has(plugin.name)) conflict(`plugin "${plugin.name}" is registered twice`, plugin.name);
    for (const dependency of plugin.dependsOn ?? []) {
      if (!names.has(dependency)) conflict(`plugin "${plugin.name}" needs plugin "${dependency}" registered before it`, plugin.name);
    }
    names.add(plugin.name);
  }
  // A conflict makes registering meaningless (a plugin twice registers its bindings twice).
  if (problems.length > 0) return { families: new Map(), problems };
  const failed = new Set<string>();
  for (const plugin of plugins) {
    try {
      plugin.register(container, config);
    } catch (error) {
      failed.add(plugin.name);
      problems.push(...fromError(error, plugin.name, `plugin "${plugin.name}" failed to register: `));
    }
  }
  const families = new Map<string, NetworkFamily>();
  for (const family of resolveAllOptional<NetworkFamily>(container, Tokens.Family)) {
    if (families.has(family.name)) conflict(`network family "${family.name}" is registered twice`);
    families.set(family.name, family);
  }
  const embedded = new Set(resolveAllOptional<EmbeddedUpstreamProvider>(container, Tokens.EmbeddedUpstream).map((p) => p.kind));
  config.networks.forEach((network, n) => {
    network.families.forEach((name, f) => {
      // A family plugin is named after its family: when it failed to register, its family is missing because of it.
      if (!families.has(name) && !failed.has(name)) problems.push({ line: `networks[${n}].families[${f}]: no plugin provides network family "${name}"${knownList(families.keys())}`, config: true, code: 'PLUGIN_INVALID', plugin: undefined, cause: undefined });
    });
    const networkFamilies = network.families.flatMap((name) => families.get(name) ?? []);
    for (const line of unknownMethodsProblems(network.unknownMethods, protectedNamespaces(networkFamilies), `networks[${n}].unknownMethods`)) {
      problems.push({ line, config: true, code: 'PLUGIN_INVALID', plugin: undefined, cause: undefined });
    }
    network.upstreams.forEach((upstream, i) => {
      const kind = upstream.embedded?.split('#')[0];
      if (kind !== undefined && !embedded.has(kind)) {
        problems.push({ line: `networks[${n}].upstreams[${i}].embedded: no plugin provides embedded upstream "${kind}"${knownList(embedded)}`, config: true, code: 'PLUGIN_INVALID', plugin: undefined, cause: undefined });
      }
    });
  });
  try {
    orderStages(resolveAllOptional<StageDefinition>(container, Tokens.Stage));
  } catch (error) {
    problems.push({ line: (error as Error).message, config: false, code: 'PLUGIN_CONFLICT', plugin: undefined, cause: error });
  }
  return { families, problems };
}

function knownList(names: Iterable<string>): string {
  const list = [...names];
  return list.length === 0 ? '' : ` (provided: ${list.join(', ')})`;
}

/**
 * The error for an assembly's problems: the original error when there is one problem from one error
 * (its message and code unchanged), a {@link ConfigError} listing them when all are about settings,
 * else a {@link PluginError} listing every line, with the first problem's code and plugin.
 */
export function assemblyError(problems: readonly AssemblyProblem[]): Error {
  const first = problems[0]!;
  if (problems.every((p) => p.cause === first.cause) && first.cause instanceof Error && (first.cause instanceof ConfigError || PluginError.is(first.cause))) return first.cause;
  if (problems.every((p) => p.config)) return new ConfigError(problems.map((p) => p.line));
  if (problems.length === 1) return new PluginError(first.line, { code: first.code, plugin: first.plugin, cause: first.cause });
  return new PluginError(`the gateway cannot be assembled:\n  ${problems.map((p) => p.line).join('\n  ')}`, {
    code: first.code,
    plugin: first.plugin,
    cause: new AggregateError(problems.map((p) => p.cause ?? new Error(p.line)), 'assembly problems'),
  });
}
