import { Ajv, type ErrorObject } from 'ajv';

/**
 * The annotation a schema may carry to say, in its own words, what a value that fails it must be:
 * `problem: 'must be an origin such as https://app.example.com'` replaces the validator's wording for
 * every keyword of that schema, `problem: { not: 'requireSecret and a required jwt cannot both be on' }`
 * for the keywords named. On a union (`anyOf`, `oneOf`) it words the union's one line.
 */
export const PROBLEM_KEYWORD = 'problem';

/**
 * A validator configured as the gateway's configuration is checked: every problem at once, defaults
 * filled in when `useDefaults`, strict schemas, and the `problem` annotation known. `verbose` keeps each
 * error's schema, which the wording of unions and annotations needs.
 */
export function createSchemaValidator(useDefaults: boolean): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults, strict: true, strictRequired: false, allowUnionTypes: true, verbose: true });
  ajv.addVocabulary([PROBLEM_KEYWORD]);
  return ajv;
}

type Schema = Readonly<Record<string, unknown>>;

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

/** The schema's own words for a failure of `keyword`, when it has any. */
function annotated(schema: unknown, keyword: string): string | undefined {
  const problem = (schema as Schema | undefined)?.[PROBLEM_KEYWORD];
  if (typeof problem === 'string') return problem;
  if (typeof problem === 'object' && problem !== null) {
    const own = (problem as Record<string, unknown>)[keyword];
    if (typeof own === 'string') return own;
  }
  return undefined;
}

function describe(error: ErrorObject): string {
  const own = annotated(error.parentSchema, error.keyword);
  if (own !== undefined) return own;
  if (error.keyword === 'required') return 'is required';
  if (error.keyword === 'additionalProperties') return 'is not a known field';
  if (error.keyword === 'enum') return `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`;
  if (error.keyword === 'const') return `must be ${JSON.stringify((error.params as { allowedValue: unknown }).allowedValue)}`;
  return error.message ?? 'is invalid';
}

// ---- Unions ---------------------------------------------------------------------------------------

const TYPE_WORDS: Readonly<Record<string, string>> = {
  string: 'a string',
  integer: 'an integer',
  number: 'a number',
  boolean: 'true or false',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** The JSON types a union branch admits, or undefined when it does not say (no `type`, `const` or `enum`). */
function branchTypes(branch: unknown): ReadonlySet<string> | undefined {
  if (typeof branch !== 'object' || branch === null) return undefined;
  const schema = branch as Schema;
  if (typeof schema.type === 'string') return new Set(schema.type === 'number' ? ['number', 'integer'] : [schema.type]);
  if (Array.isArray(schema.type)) return new Set((schema.type as string[]).flatMap((type) => (type === 'number' ? ['number', 'integer'] : [type])));
  if ('const' in schema) return new Set([jsonType(schema.const)]);
  if (Array.isArray(schema.enum)) return new Set((schema.enum as unknown[]).map(jsonType));
  return undefined;
}

/** A branch in a few words: its own `problem` (without a leading "must be"), its constant, its values or its type. */
function branchWords(branch: Schema): string {
  const own = annotated(branch, 'type');
  if (own !== undefined) return own.replace(/^must be /, '');
  if ('const' in branch) return JSON.stringify(branch.const);
  if (Array.isArray(branch.enum)) return (branch.enum as unknown[]).map((value) => JSON.stringify(value)).join(' or ');
  const types = Array.isArray(branch.type) ? (branch.type as string[]) : [branch.type as string];
  return types.map((type) => TYPE_WORDS[type] ?? type).join(' or ');
}

/**
 * Words a failed union. When the value's JSON type is admitted by exactly one branch, that branch's
 * errors say best what is wrong (`transports[1]: must NOT have fewer than 1 characters` rather than every
 * branch's complaint): they are kept, and the union's own line dropped. Otherwise, when every branch
 * declares its type, the union becomes one line naming what the value may be (`must be "*" or an
 * array`). A union whose branches do not declare types keeps its branches' errors.
 */
function wordUnion(union: ErrorObject, branchErrors: readonly ErrorObject[]): { keep: readonly ErrorObject[]; line?: string } {
  const branches = union.schema as readonly Schema[];
  const own = annotated(union.parentSchema, union.keyword);
  const types = branches.map(branchTypes);
  if (own === undefined && types.some((set) => set === undefined)) {
    return branchErrors.length > 0 ? { keep: branchErrors } : { keep: [], line: describe(union) };
  }
  if (own === undefined) {
    const type = jsonType(union.data);
    const admitting = types.flatMap((set, i) => (set!.has(type) ? [i] : []));
    if (admitting.length === 1) {
      const prefix = `${union.schemaPath}/${admitting[0]}/`;
      const theirs = branchErrors.filter((error) => error.schemaPath.startsWith(prefix));
      if (theirs.length > 0) return { keep: theirs };
    }
  }
  return { keep: [], line: own ?? `must be ${branches.map(branchWords).join(' or ')}` };
}

/**
 * Ajv's errors as the gateway words configuration problems: one line per field, `path: what is wrong`,
 * each path under `where` (`plugins.health`) when given. A schema's `problem` annotation replaces the
 * validator's words; a failed union (`anyOf`, `oneOf`) is worded once (see the union rules above),
 * not once per branch. Needs the errors of a validator made with {@link createSchemaValidator}.
 */
export function schemaProblems(errors: readonly ErrorObject[], where = ''): string[] {
  // Ajv reports a union's branch errors before the union's own error: word each union once, innermost first.
  const unions = errors.filter((error) => error.keyword === 'anyOf' || error.keyword === 'oneOf');
  const dropped = new Set<ErrorObject>();
  const unionLines = new Map<ErrorObject, string>();
  for (const union of unions) {
    // The union's branch errors: under its schema path, and at or under its value (one schema checks many values).
    const prefix = `${union.schemaPath}/`;
    const at = union.instancePath;
    const branchErrors = errors.filter((error) =>
      error !== union && !dropped.has(error) && error.schemaPath.startsWith(prefix) && (error.instancePath === at || error.instancePath.startsWith(`${at}/`)));
    const { keep, line } = wordUnion(union, branchErrors);
    for (const error of branchErrors) if (!keep.includes(error)) dropped.add(error);
    if (line !== undefined) unionLines.set(union, line);
    else dropped.add(union);
  }
  const seen = new Set<string>();
  const problems: string[] = [];
  for (const error of errors) {
    if (dropped.has(error)) continue;
    const line = `${fieldPath(error, where)}: ${unionLines.get(error) ?? describe(error)}`;
    if (!seen.has(line)) problems.push(line), seen.add(line);
  }
  return problems;
}
