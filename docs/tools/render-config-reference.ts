import { configSchema } from '../../core/index.js';

interface SchemaNode {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: readonly unknown[];
  const?: unknown;
  oneOf?: readonly SchemaNode[];
  properties?: Record<string, SchemaNode>;
  items?: SchemaNode;
  additionalProperties?: SchemaNode | boolean;
  required?: readonly string[];
  pattern?: string;
  minimum?: number;
  maximum?: number;
}

function typeOf(node: SchemaNode): string {
  if (node.oneOf !== undefined) return node.oneOf.map(typeOf).join(' \\| ');
  if (node.const !== undefined) return `\`${String(node.const)}\``;
  if (node.enum !== undefined) return node.enum.map((v) => `\`${String(v)}\``).join(' \\| ');
  if (node.type === 'array') return `${node.items === undefined ? 'any' : typeOf(node.items)}[]`;
  if (node.type === 'object' && typeof node.additionalProperties === 'object' && node.properties === undefined) return `map of ${typeOf(node.additionalProperties)}`;
  return String(node.type ?? 'any');
}

function rows(node: SchemaNode, path: string, required: boolean, out: string[]): void {
  if (path !== '') {
    const def = node.default === undefined ? (required ? 'required' : '—') : `\`${JSON.stringify(node.default)}\``;
    out.push(`| \`${path}\` | ${typeOf(node)} | ${def} | ${(node.description ?? '').replace(/\|/g, '\\|')} |`);
  }
  const children = node.properties ?? (node.type === 'array' ? node.items?.properties : undefined) ?? (typeof node.additionalProperties === 'object' ? node.additionalProperties.properties : undefined);
  if (children === undefined) return;
  const owner = node.properties !== undefined ? node : node.type === 'array' ? node.items! : (node.additionalProperties as SchemaNode);
  const prefix = path === '' ? '' : node.type === 'array' ? `${path}[]` : node.properties !== undefined ? path : `${path}.<name>`;
  for (const [name, child] of Object.entries(children)) {
    rows(child, prefix === '' ? name : `${prefix}.${name}`, owner.required?.includes(name) ?? false, out);
  }
}

/** The configuration reference table, rendered from the config schema. */
export function renderConfigReference(): string {
  const out = ['| Field | Type | Default | Description |', '|---|---|---|---|'];
  rows(configSchema as unknown as SchemaNode, '', true, out);
  return out.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) process.stdout.write(`${renderConfigReference()}\n`);
