/** Property names whose values are secrets wherever they appear (`keys[].secret`, `plugins.admin.token`...). */
const SECRET_NAME = /^(key|secret|token|password|passphrase|apikey|api[-_]key|authorization|credentials?)$|secret|token|password/i;
/** A URL path segment or query value long and random enough to be a provider's API key (`/v3/<key>`). */
const TOKEN_LIKE = /^[A-Za-z0-9_-]{16,}$/;

/** A secret shown as its last four characters at most, so an operator can tell keys apart. */
function mask(value: string): string {
  return value.length >= 12 ? `****${value.slice(-4)}` : '****';
}

/** A URL with its password, API-key-like path segments and query values masked; other strings unchanged. */
function maskUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  if (!/^(https?|wss?|redis|rediss):$/.test(url.protocol)) return value;
  if (url.password !== '') url.password = '****';
  url.pathname = url.pathname.split('/').map((segment) => (TOKEN_LIKE.test(segment) ? mask(segment) : segment)).join('/');
  for (const [name, v] of [...url.searchParams]) if (SECRET_NAME.test(name) || TOKEN_LIKE.test(v)) url.searchParams.set(name, mask(v));
  return url.toString();
}

/**
 * A copy of a configuration fit to print: values under secret-sounding names (API keys and secrets,
 * tokens, passwords) masked, and URLs stripped of passwords and of path segments or query values that
 * look like a provider's API key.
 */
export function maskSecrets(value: unknown, name = ''): unknown {
  if (typeof value === 'string') return SECRET_NAME.test(name) ? mask(value) : maskUrl(value);
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, name));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, maskSecrets(item, key)]));
  }
  return value;
}

/** The steps of a field path as the configuration loader names fields (`networks[0].upstreams[1].url`). */
function steps(path: string): Array<string | number> {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

/**
 * A copy of a configuration with the string values at `fields` masked (the ones taken from the
 * environment: whatever their names, they may hold secrets the file itself leaves out).
 */
export function maskFields(value: unknown, fields: readonly string[]): unknown {
  const copy = structuredClone(value) as Record<string | number, unknown>;
  for (const field of fields) {
    const path = steps(field);
    let parent: Record<string | number, unknown> | undefined = copy;
    for (const step of path.slice(0, -1)) parent = (parent?.[step] ?? undefined) as Record<string | number, unknown> | undefined;
    const last = path.at(-1);
    // A number or boolean the environment gave (server.port: ${PORT}) is masked too: the file's reader sees where, not what.
    if (parent !== undefined && last !== undefined && ['string', 'number', 'boolean'].includes(typeof parent[last])) parent[last] = mask(String(parent[last]));
  }
  return copy;
}
