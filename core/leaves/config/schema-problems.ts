import type { ErrorObject } from 'ajv';

function fieldPath(error: ErrorObject, where: string): string {
  const parts = error.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = '';
  for (const part of parts) path += /^\d+$/.test(part) ? `[${part}]` : path === '' ? part : `.${part}`;
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    path = path === '' ? missing : `${path}.${missing}`;
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    path = path === '' ? extra : `${path}.${extra}`;
  }
  if (where !== '') path = path === '' ? where : path.startsWith('[') ? `${where}${path}` : `${where}.${path}`;
  return path === '' ? '(root)' : path;
}

function describe(error: ErrorObject): string {
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'enum') return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  return error.message ?? 'is invalid';
}

/**
 * Ajv's errors as the gateway words configuration problems: one line per field, `path: what is wrong`,
 * each path under `where` (`plugins.health`) when given.
 */
export function schemaProblems(errors: readonly ErrorObject[], where = ''): string[] {
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const error of errors) {
    // oneOf failures repeat their branches' errors; the branch errors name the field better.
    if (error.keyword === 'oneOf') continue;
    const line = `${fieldPath(error, where)}: ${describe(error)}`;
    if (!seen.has(line)) problems.push(line), seen.add(line);
  }
  return problems;
}
