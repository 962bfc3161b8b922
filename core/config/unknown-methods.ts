/**
 * Which names a network's `unknownMethods: forward` policy lets through: an allowlist of namespaces and
 * of single methods, never a namespace in which the node is administered unless its method is named one
 * by one, and never a namespace the network's families switched off.
 *
 * @module
 */
import type { UnknownMethodsConfig } from './types.js';

/** The namespaces a network's families protect, lower-cased (see `NetworkFamily.adminNamespaces`). */
export interface ProtectedNamespaces {
  /** Namespaces forwarded only method by method. */
  readonly admin: ReadonlySet<string>;
  /** Namespaces never forwarded. */
  readonly closed: ReadonlySet<string>;
}

/** What a family says of its namespaces (the part of `NetworkFamily` this module reads). */
export interface NamespaceMarks {
  /** Namespaces forwarded only method by method (`NetworkFamily.adminNamespaces`). */
  readonly adminNamespaces?: readonly string[];
  /** Namespaces never forwarded (`NetworkFamily.closedNamespaces`). */
  readonly closedNamespaces?: readonly string[];
}

/** The namespace of a method's name: its part before the first `_` (`eth` of `eth_getAccount`); undefined without one. */
export function methodNamespace(name: string): string | undefined {
  const end = name.indexOf('_');
  return end === -1 ? undefined : name.slice(0, end);
}

/** The union of what a network's families protect. */
export function protectedNamespaces(families: readonly NamespaceMarks[]): ProtectedNamespaces {
  const lower = (list: readonly string[] | undefined): string[] => (list ?? []).map((ns) => ns.toLowerCase());
  return {
    admin: new Set(families.flatMap((f) => lower(f.adminNamespaces))),
    closed: new Set(families.flatMap((f) => lower(f.closedNamespaces))),
  };
}

/**
 * True when `policy` forwards `name`, a method none of the network's families defines: named in
 * `methods`, or in one of `namespaces` that is not an admin namespace; in either case not in a closed
 * namespace. Protected namespaces are compared without regard to case, so no spelling of one slips
 * through to a node that would accept it.
 */
export function forwards(policy: UnknownMethodsConfig, name: string, marks: ProtectedNamespaces): boolean {
  if (policy.policy !== 'forward') return false;
  const namespace = methodNamespace(name);
  const guarded = namespace?.toLowerCase();
  if (guarded !== undefined && marks.closed.has(guarded)) return false;
  if (policy.methods?.includes(name) === true) return true;
  return namespace !== undefined && policy.namespaces?.includes(namespace) === true && !marks.admin.has(guarded!);
}

/**
 * The problems of a network's policy against what its families protect, each as `path: what is wrong`
 * (`where` is the policy's path, `networks[0].unknownMethods`): an admin or closed namespace listed in
 * `namespaces`, a method of a closed namespace in `methods`.
 */
export function unknownMethodsProblems(policy: UnknownMethodsConfig | undefined, marks: ProtectedNamespaces, where: string): string[] {
  if (policy?.policy !== 'forward') return [];
  const problems: string[] = [];
  policy.namespaces?.forEach((namespace, i) => {
    const guarded = namespace.toLowerCase();
    if (marks.closed.has(guarded)) problems.push(`${where}.namespaces[${i}]: the ${namespace} namespace is switched off on this network`);
    else if (marks.admin.has(guarded)) problems.push(`${where}.namespaces[${i}]: ${namespace}_ methods administer the node and are never forwarded by namespace: name each one in ${where}.methods`);
  });
  policy.methods?.forEach((method, i) => {
    const namespace = methodNamespace(method);
    if (namespace !== undefined && marks.closed.has(namespace.toLowerCase())) problems.push(`${where}.methods[${i}]: the ${namespace} namespace is switched off on this network`);
  });
  return problems;
}
