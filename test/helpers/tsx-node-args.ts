/**
 * Node flags that run one of this repository's TypeScript files as the tests do: through tsx, with
 * `tollgate` and `@tollgate/devnet` resolved to their sources (the `tollgate-source` export condition)
 * instead of the build in `dist/`. Child processes do not inherit tap's `node-arg`, so every spawn of a
 * TypeScript file passes these.
 */
export const TSX_NODE_ARGS: readonly string[] = ['--conditions=tollgate-source', '--import', 'tsx'];
