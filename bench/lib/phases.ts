/**
 * Which phase of a call a profile sample belongs to. A sample is charged to the nearest frame on its
 * stack that a rule below names, so the library code a phase calls (ajv under `validate`, Node's `writev`
 * under the transport's write, undici under `dispatch`) counts with the phase that called it. A sample
 * with no such frame (a socket read callback, the HTTP parser, a timer) is charged by its own origin:
 * undici's callbacks to "upstream I/O", the rest to "Node HTTP and event loop".
 */

/** A phase and the source files (under `core/`, `plugins/` or `bench/`, built or not) that make it up. */
interface PhaseRule {
  readonly phase: string;
  readonly files: RegExp;
}

/**
 * Most specific first: a stage's own file names its phase before the pipeline's generic files do. The
 * families' hooks (`plugins/evm`, `plugins/solana`) match no rule, so they count with the stage that ran
 * them (param checks with `validate`, head reads with `scan answer`).
 */
const RULES: readonly PhaseRule[] = [
  { phase: 'scan answer', files: /^core\/(jsonrpc\/(decode|scan|member-scan|answer-view|json-rpc-protocol|node-answer-error)|upstream\/answer-head|pipeline\/(node-error|stages\/check-result))\./ },
  { phase: 'auth', files: /^core\/(pipeline\/stages\/authenticate|keys\/)/ },
  { phase: 'validate', files: /^core\/(pipeline\/stages\/validate|network\/compile-params)\.|^node_modules\/ajv\// },
  { phase: 'meter', files: /^core\/(pipeline\/stages\/(meter|enforce-limits)\.|pipeline\/charge-once\.|metering\/|usage\/)|^plugins\/(ledger-[^/]+|payments)\// },
  { phase: 'route', files: /^core\/(pipeline\/stages\/route|upstream\/(failover-selector|network-health|upstream-health|circuit-breaker|hedge-choice))\./ },
  { phase: 'dispatch', files: /^core\/(pipeline\/stages\/dispatch\.|upstream\/|context\/request-upstream\.)/ },
  { phase: 'parse request', files: /^core\/jsonrpc\/(json-rpc-engine|client-batch)\.|^plugins\/http\/read-body\./ },
  { phase: 'HTTP transport (route the URL, write the answer)', files: /^plugins\/http\// },
  { phase: 'cache', files: /^plugins\/cache(-redis)?\// },
  { phase: 'pipeline (context, stages, RxJS)', files: /^core\/(pipeline|context)\/|^node_modules\/rxjs\// },
  { phase: 'bare proxy (read, forward, write)', files: /^bench\/(bare-proxy|bare-stream-proxy|fastify-proxy)\./ },
];

/**
 * A frame's path as the rules read it: from `node_modules/` on for a dependency, after `dist/` for a build,
 * so the gateway of another checkout (`--baseline ../before`: `../before/dist/core/...`) reads the same.
 */
function sourcePath(path: string): string {
  const modules = path.lastIndexOf('node_modules/');
  if (modules !== -1) return path.slice(modules);
  const built = path.lastIndexOf('dist/');
  if (built !== -1) return path.slice(built + 'dist/'.length);
  return path.replace(/^(\.\.\/[^/]+\/)+/, '');
}

/** The phase a frame names, from its path relative to the repository; undefined when none. */
export function phaseOfFile(path: string): string | undefined {
  const source = sourcePath(path);
  for (const rule of RULES) if (rule.files.test(source)) return rule.phase;
  return undefined;
}

/** The phase of a sample none of whose frames a rule names, by its own frame's origin. */
export function phaseOfOrigin(origin: string): string {
  if (origin === '(garbage collector)') return 'GC';
  if (origin === '(program)') return 'V8 (program)';
  if (origin === 'undici') return 'upstream I/O (undici callbacks)';
  return 'Node HTTP and event loop';
}
