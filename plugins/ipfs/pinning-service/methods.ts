import type { JsonSchema } from '../../../core/plugin-api.js';
import type { MethodDefinition } from '../../../core/family-api.js';
import type { CommandKind } from '../commands.js';
import { parseContentPath } from '../content-path.js';

/** The name of the Pinning Service API's transport, recorded on its calls (its methods are offered there only). */
export const PSA_TRANSPORT = 'ipfs-pins';

/** The Pinning Service API's operations, as methods of the `ipfs` family. */
export const PsaMethod = Object.freeze({
  /** `POST /pins`: params `[pin]`. */
  create: 'psa/create',
  /** `GET /pins`: params `[query]`. */
  list: 'psa/list',
  /** `GET /pins/{requestid}`: params `[requestid]`. */
  get: 'psa/get',
  /** `POST /pins/{requestid}`: params `[requestid, pin]`. */
  replace: 'psa/replace',
  /** `DELETE /pins/{requestid}`: params `[requestid]`. */
  delete: 'psa/delete',
});

/** One of {@link PsaMethod}'s names. */
export type PsaMethodName = (typeof PsaMethod)[keyof typeof PsaMethod];

/** The spec's `Status` values. */
export const PIN_STATUSES = ['queued', 'pinning', 'pinned', 'failed'] as const;

/** The spec's `TextMatchingStrategy` values. */
export const TEXT_MATCHES = ['exact', 'iexact', 'partial', 'ipartial'] as const;

/** The spec's `Pin` object, as the client sends it. */
export interface PinObject {
  readonly cid: string;
  readonly name?: string;
  readonly origins?: readonly string[];
  readonly meta?: Readonly<Record<string, string>>;
}

/** `GET /pins`'s filters, as the transport reads them from the query. */
export interface PinQuery {
  readonly cid?: readonly string[];
  readonly name?: string;
  readonly match?: (typeof TEXT_MATCHES)[number];
  readonly status?: ReadonlyArray<(typeof PIN_STATUSES)[number]>;
  readonly before?: string;
  readonly after?: string;
  readonly limit?: number;
  readonly meta?: Readonly<Record<string, string>>;
}

const STRINGS = { type: 'object', additionalProperties: { type: 'string' }, maxProperties: 1000 } as const;

/** The spec's `Pin` (fields it does not define are ignored, as a client of a later revision may send them). */
const PIN: JsonSchema = {
  type: 'object',
  required: ['cid'],
  properties: {
    cid: { type: 'string', minLength: 1, maxLength: 512 },
    name: { type: 'string', maxLength: 255 },
    // The spec says at most 20; kubo's `pin remote add` sends every address of its node, which may be more.
    origins: { type: 'array', items: { type: 'string', maxLength: 1024 }, uniqueItems: true, maxItems: 100 },
    meta: STRINGS,
  },
};

const QUERY: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cid: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 512 }, uniqueItems: true, minItems: 1, maxItems: 10 },
    name: { type: 'string', maxLength: 255 },
    match: { enum: TEXT_MATCHES },
    status: { type: 'array', items: { enum: PIN_STATUSES }, uniqueItems: true, minItems: 1 },
    before: { type: 'string' },
    after: { type: 'string' },
    limit: { type: 'integer', minimum: 1, maximum: 1000 },
    meta: STRINGS,
  },
};

const REQUEST_ID: JsonSchema = { type: 'string', minLength: 1, maxLength: 512 };

function positional(...items: JsonSchema[]): JsonSchema {
  return { type: 'array', prefixItems: items, minItems: items.length, items: false };
}

/** Why `cid` is not a CID, if it is not one (a path below a CID is not pinned either). */
function cidProblem(cid: string): string | undefined {
  try {
    if (parseContentPath(cid).segments.length === 0) return undefined;
    return `cid: pin a CID, not a path below one: ${cid}`;
  } catch {
    return `cid: not a valid CID: ${cid}`;
  }
}

/** Whether `value` is an RFC 3339 timestamp (the spec's `date-time`). */
export function isTimestamp(value: string): boolean {
  return /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(value) && !Number.isNaN(Date.parse(value));
}

function checkQuery(params: unknown): string | undefined {
  const [query] = params as [PinQuery];
  for (const name of ['before', 'after'] as const) {
    const value = query[name];
    if (value !== undefined && !isTimestamp(value)) return `${name}: not an RFC 3339 timestamp: ${value}`;
  }
  for (const cid of query.cid ?? []) {
    const problem = cidProblem(cid);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

interface PsaMethodSpec {
  readonly name: PsaMethodName;
  readonly kind: CommandKind;
  readonly credits: number;
  readonly params: JsonSchema;
  readonly paramNames: readonly string[];
  readonly checkParams?: (params: unknown) => string | undefined;
  readonly description: string;
}

/**
 * The operations, priced in credits as the pin commands are: a pin costs the node a walk of the whole
 * DAG, a listing or a status costs the gateway a read of the key's pins.
 */
const SPECS: readonly PsaMethodSpec[] = [
  { name: PsaMethod.create, kind: 'write', credits: 10, params: positional(PIN), paramNames: ['pin'], checkParams: (p) => cidProblem((p as [PinObject])[0].cid), description: 'Pins content as the key\'s own; answers a `PinStatus` (queued), the node pins it in the background.' },
  { name: PsaMethod.list, kind: 'read', credits: 1, params: positional(QUERY), paramNames: ['query'], checkParams: checkQuery, description: 'The key\'s pins matching the filters, newest first: `PinResults`.' },
  { name: PsaMethod.get, kind: 'read', credits: 1, params: positional(REQUEST_ID), paramNames: ['requestid'], description: 'One of the key\'s pins and its status: `PinStatus`.' },
  { name: PsaMethod.replace, kind: 'write', credits: 10, params: positional(REQUEST_ID, PIN), paramNames: ['requestid', 'pin'], checkParams: (p) => cidProblem((p as [string, PinObject])[1].cid), description: 'Replaces one of the key\'s pins by a new one; the node keeps the old content until the new is pinned.' },
  { name: PsaMethod.delete, kind: 'write', credits: 2, params: positional(REQUEST_ID), paramNames: ['requestid'], description: 'Removes one of the key\'s pins (the node unpins only content no other key pins).' },
];

/** Whether a Pinning Service API method reads or writes (for the request-rate limits); undefined for other names. */
export function psaMethodKind(name: string): CommandKind | undefined {
  return SPECS.find((spec) => spec.name === name)?.kind;
}

/** The operations' names, as `plugins.ipfs.credits` may name them. */
export const PSA_METHOD_NAMES: readonly string[] = SPECS.map((spec) => spec.name);

/** The operations as methods of the `ipfs` family, offered on the Pinning Service API's transport only; `credits` overrides prices by name. */
export function psaMethods(credits?: Readonly<Record<string, number>>): MethodDefinition[] {
  return SPECS.map((spec) => ({
    name: spec.name,
    params: spec.params,
    paramNames: spec.paramNames,
    credits: credits?.[spec.name] ?? spec.credits,
    // A pin request changes the key's pins: it is not sent twice.
    idempotent: spec.kind === 'read',
    transports: [PSA_TRANSPORT],
    ...(spec.checkParams === undefined ? {} : { checkParams: spec.checkParams }),
    description: spec.description,
  }));
}
