/** The environment a configuration file's `${VAR}` references read (`process.env` by default). */
export type ConfigEnvironment = Readonly<Record<string, string | undefined>>;

/** What {@link interpolateEnv} made of a parsed configuration. */
export interface Interpolated {
  /** A copy of the data with every reference replaced (the data itself where there were problems). */
  readonly value: unknown;
  /** The fields whose value took (at least in part) a variable's value (`plugins.admin.token`), in file order; defaults do not count. */
  readonly fields: readonly string[];
  /** The fields that held a reference, whether the variable or its default filled it, in file order: the values `loadConfigFile` types as the schema wants. */
  readonly referenced: readonly string[];
  /** One line per bad reference, naming the field and the variable (`plugins.admin.token: ${ADMIN_TOKEN} is not set`). */
  readonly problems: readonly string[];
}

// `$${` is a literal `${`; `${NAME}` and `${NAME:-default}` are references; any other `${...}` is a mistake
// worth naming (a placeholder left in from an example, say), not a literal to pass on as a secret.
const REFERENCE = /\$\$\{|\$\{([^}]*)\}|\$\{/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function fieldPath(path: readonly (string | number)[]): string {
  return path.reduce<string>((text, part) => (typeof part === 'number' ? `${text}[${part}]` : text === '' ? part : `${text}.${part}`), '');
}

/**
 * Replaces environment references in every string of a parsed configuration (values only: names stay
 * as written): `${VAR}` by the variable's value, `${VAR:-default}` by the default when the variable is
 * unset or empty, `$${` by a literal `${`. A variable that is unset, without a default, is a problem
 * naming it; so is a `${...}` that is not a reference. Values stay strings here; `loadConfigFile`
 * then turns a referenced value into the number or boolean its field wants when it spells one (`server.port: ${PORT}`). Works on the parsed data rather than the text, so
 * a value never changes the file's structure (a `:` or newline in a secret stays part of the string).
 *
 * @example
 * ```ts
 * interpolateEnv({ plugins: { admin: { token: '${ADMIN_TOKEN}' } } }, { ADMIN_TOKEN: 's3cret-and-long' });
 * // → { value: { plugins: { admin: { token: 's3cret-and-long' } } }, fields: ['plugins.admin.token'], referenced: ['plugins.admin.token'], problems: [] }
 * ```
 */
export function interpolateEnv(data: unknown, env: ConfigEnvironment): Interpolated {
  const fields: string[] = [];
  const referenced: string[] = [];
  const problems: string[] = [];
  const walk = (value: unknown, path: (string | number)[]): unknown => {
    if (typeof value === 'string') {
      if (!value.includes('${')) return value;
      const where = fieldPath(path) || '(file)';
      let fromEnv = false;
      let reference = false;
      const replaced = value.replace(REFERENCE, (match: string, inner: string | undefined) => {
        if (match === '$${') return '${';
        if (inner === undefined) {
          problems.push(`${where}: "\${" is not closed by "}" (write "$\${" for a literal "\${")`);
          return match;
        }
        const split = inner.indexOf(':-');
        const name = split === -1 ? inner : inner.slice(0, split);
        if (!NAME.test(name)) {
          problems.push(`${where}: "${match}" is not an environment variable reference (\${NAME} or \${NAME:-default}; "$\${" for a literal "\${")`);
          return match;
        }
        const set = env[name];
        reference = true;
        if (split !== -1 && (set === undefined || set === '')) return inner.slice(split + 2);
        if (set !== undefined) {
          fromEnv = true;
          return set;
        }
        problems.push(`${where}: \${${name}} is not set (give it a default with \${${name}:-default})`);
        return match;
      });
      if (fromEnv) fields.push(fieldPath(path));
      if (reference) referenced.push(fieldPath(path));
      return replaced;
    }
    if (Array.isArray(value)) return value.map((item, i) => walk(item, [...path, i]));
    if (value !== null && typeof value === 'object') {
      return Object.fromEntries(Object.entries(value).map(([name, item]) => [name, walk(item, [...path, name])]));
    }
    return value;
  };
  const value = walk(data, []);
  return { value: problems.length > 0 ? data : value, fields, referenced, problems };
}
