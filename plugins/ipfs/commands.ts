import { Errors, GatewayError, type JsonSchema } from '../../core/plugin-api.js';
import type { LimitsInput, MethodDefinition } from '../../core/family-api.js';
import { parseContentPath } from './content-path.js';
import { IPFS_REQUEST } from './context-keys.js';
import { PIN_COMMANDS } from './pin-commands.js';

/** Whether a command reads content or writes it (a write takes a multipart upload): each kind has its own request-rate limit. */
export type CommandKind = 'read' | 'write';

/** A command of the file-storage API, as the family offers it. */
export interface IpfsCommand {
  /** The path after `/api/v0/`, e.g. `object/get`. */
  readonly name: string;
  /** Read or write, for the rate limits. */
  readonly kind: CommandKind;
  /** The name kubo gives its positional argument (used in error messages), when it takes one. */
  readonly argument?: string;
  /** Whether the argument may repeat. */
  readonly variadic?: boolean;
  /** How many arguments it takes, when not one (or one or more, `variadic`): `pin/ls` none or more, `pin/update` two. */
  readonly argumentCount?: { readonly min: number; readonly max: number };
  /** Whether it takes a multipart upload (default: writes do); the pin commands write without one. */
  readonly body?: boolean;
  /** The options (query parameters) the gateway checks; others are forwarded unchecked, as kubo accepts them. */
  readonly options: Readonly<Record<string, JsonSchema>>;
  /** Whether the answer is streamed to the client (else it is read whole, and small). */
  readonly stream: boolean;
  /** Credits a call costs by default (`plugins.ipfs.credits` may change it); bytes are metered besides. */
  readonly credits: number;
  /** One line for the docs. */
  readonly description: string;
}

/** Go's `strconv.ParseBool` values, and the empty value a bare flag has. */
const BOOL: JsonSchema = { type: 'string', pattern: '^(|1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$', description: 'true or false' };
const INT64: JsonSchema = { type: 'string', pattern: '^[+-]?[0-9]{1,18}$', description: 'an integer' };
/** A multicodec or multihash name (`dag-cbor`, `sha2-256`), or go-multicodec's `0x` hex code. */
const CODEC: JsonSchema = { type: 'string', pattern: '^([a-z0-9-]{1,32}|0x[0-9a-fA-F]{1,8})$', description: 'a multicodec name' };

/** The commands of the file-storage API. */
export const IPFS_COMMANDS: readonly IpfsCommand[] = [
  {
    name: 'cat',
    kind: 'read',
    argument: 'ipfs-path',
    variadic: true,
    options: { offset: INT64, o: INT64, length: INT64, l: INT64, progress: BOOL, p: BOOL },
    stream: true,
    credits: 0,
    description: 'The bytes of one or more files, concatenated; `offset` and `length` select a range.',
  },
  {
    name: 'object/get',
    kind: 'read',
    argument: 'key',
    options: {
      'data-encoding': { enum: ['text', 'base64'] },
      encoding: { enum: ['json'] },
      enc: { enum: ['json'] },
    },
    stream: false,
    credits: 0,
    description: 'A dag-pb node as `{Links:[{Name,Hash,Size}],Data}` (served from the raw block when the upstream lacks the command).',
  },
  {
    name: 'block/get',
    kind: 'read',
    argument: 'cid',
    options: {},
    stream: true,
    credits: 0,
    description: 'The raw bytes of one block.',
  },
  {
    name: 'block/stat',
    kind: 'read',
    argument: 'cid',
    options: {},
    stream: false,
    credits: 0,
    description: 'A block\'s CID and size, as `{Key,Size}`.',
  },
  {
    name: 'block/put',
    kind: 'write',
    options: { 'cid-codec': CODEC, mhtype: CODEC, mhlen: INT64, format: CODEC, f: CODEC, pin: BOOL, 'allow-big-block': BOOL },
    stream: true,
    credits: 40,
    description: 'Stores each file of a multipart upload as one block (CIDv1 `raw` sha2-256 by default); answers NDJSON `{Key,Size}` per block.',
  },
  {
    name: 'dag/put',
    kind: 'write',
    options: { 'input-codec': CODEC, 'store-codec': CODEC, hash: CODEC, pin: BOOL, 'allow-big-block': BOOL },
    stream: true,
    credits: 40,
    description: 'Stores each file of a multipart upload as one IPLD node (dag-json in, dag-cbor stored, CIDv1); answers NDJSON `{Cid:{"/"}}` per node.',
  },
  {
    name: 'dag/get',
    kind: 'read',
    argument: 'ref',
    options: { 'output-codec': CODEC },
    stream: true,
    credits: 20,
    description: 'The IPLD node at a path, encoded in `output-codec` (dag-json by default), streamed.',
  },
  {
    name: 'dag/resolve',
    kind: 'read',
    argument: 'ref',
    options: {},
    stream: false,
    credits: 20,
    description: 'The last block a path reaches through links and the rest of the path, as `{Cid:{"/"},RemPath}`.',
  },
  {
    name: 'dag/import',
    kind: 'write',
    options: {
      'pin-roots': BOOL,
      'local-only': BOOL,
      silent: BOOL,
      stats: BOOL,
      'allow-big-block': BOOL,
      'fast-provide-root': BOOL,
      'fast-provide-dag': BOOL,
      'fast-provide-wait': BOOL,
    },
    stream: true,
    credits: 80,
    description: 'Imports the blocks of the CAR files of a multipart upload; answers NDJSON `{Root:{Cid,PinErrorMsg}}` per root (and `{Stats}` with `stats`).',
  },
  {
    name: 'get',
    kind: 'read',
    argument: 'ipfs-path',
    options: { output: { type: 'string' }, o: { type: 'string' }, archive: BOOL, a: BOOL, compress: BOOL, C: BOOL, 'compression-level': INT64, l: INT64, progress: BOOL, p: BOOL },
    stream: true,
    credits: 40,
    description: 'A file or a directory with everything under it as a tar stream (`compress` gzips it).',
  },
  {
    name: 'add',
    kind: 'write',
    options: {
      'cid-version': { enum: ['0', '1'] },
      'raw-leaves': BOOL,
      'only-hash': BOOL,
      n: BOOL,
      'wrap-with-directory': BOOL,
      w: BOOL,
      pin: BOOL,
      progress: BOOL,
      quiet: BOOL,
      quieter: BOOL,
      silent: BOOL,
      trickle: BOOL,
      'stream-channels': BOOL,
      chunker: { type: 'string', pattern: '^(size-[0-9]{1,9}|rabin(-[0-9]{1,9}){0,3}|buzhash)$', description: 'size-<bytes>, rabin or buzhash' },
      hash: { type: 'string', pattern: '^[a-z0-9-]{1,32}$', description: 'a multihash name' },
    },
    stream: true,
    credits: 0,
    description: 'Adds the files of a multipart/form-data upload; answers NDJSON `{Name,Hash,Size}` per file and directory.',
  },
  {
    name: 'version',
    kind: 'read',
    options: { number: BOOL, n: BOOL, commit: BOOL, repo: BOOL, all: BOOL },
    stream: false,
    credits: 10,
    description: 'The upstream node\'s version.',
  },
  ...PIN_COMMANDS,
];

/** The command named `name`, if the API has one. */
export function ipfsCommand(name: string): IpfsCommand | undefined {
  return IPFS_COMMANDS.find((c) => c.name === name);
}

/** Whether `command` takes a multipart upload (every write but the pin commands). */
export function takesUpload(command: IpfsCommand | undefined): boolean {
  return command !== undefined && (command.body ?? command.kind === 'write');
}

function paramsSchema(command: IpfsCommand): JsonSchema {
  return {
    type: 'array',
    prefixItems: [
      { type: 'array', items: { type: 'string' } },
      { type: 'object', properties: command.options, additionalProperties: { type: 'string' } },
    ],
    minItems: 2,
    items: false,
  };
}

function badRequest(message: string): GatewayError {
  return new GatewayError(Errors.INVALID_PARAMS, { message });
}

/** Checks what a JSON Schema cannot: the argument count, and that each content path holds a valid CID. */
function checkArguments(command: IpfsCommand): (input: LimitsInput) => undefined {
  return ({ params, ctx }) => {
    const [args] = params as [string[], Record<string, string>];
    const count = command.argumentCount;
    if (command.argument === undefined) {
      if (args.length > 0) throw badRequest(`${command.name} takes no argument`);
    } else {
      if (args.length < (count?.min ?? 1)) throw badRequest(`argument "${command.argument}" is required`);
      if (count !== undefined && args.length > count.max) throw badRequest(`${command.name} takes at most ${count.max} arguments, got ${args.length}`);
      if (count === undefined && !command.variadic && args.length > 1) throw badRequest(`${command.name} takes one argument "${command.argument}", got ${args.length}`);
      for (const arg of args) {
        try {
          parseContentPath(arg);
        } catch (error) {
          throw badRequest((error as Error).message);
        }
      }
    }
    if (takesUpload(command)) {
      const type = ctx.state.get(IPFS_REQUEST)?.contentType ?? '';
      if (!/^multipart\/form-data\s*;.*boundary=/i.test(type)) throw badRequest(`${command.name} takes a multipart/form-data body with a boundary`);
    }
    return undefined;
  };
}

/**
 * The command as a method of the `ipfs` family: offered on the `ipfs` transport only, charged its credits
 * (`credits` overrides the table's by command name), besides the API's request-rate limits.
 */
export function commandMethod(command: IpfsCommand, options: { addTimeoutMs: number; transport: string; credits?: Readonly<Record<string, number>> }): MethodDefinition {
  return {
    name: command.name,
    params: paramsSchema(command),
    paramNames: ['arg', 'options'],
    credits: options.credits?.[command.name] ?? command.credits,
    // An upload is consumed by the first upstream that reads it: it cannot be sent again.
    idempotent: command.kind !== 'write',
    transports: [options.transport],
    // Uploads (add, block/put, dag/put, dag/import) get the upload deadline.
    ...(command.kind === 'write' ? { timeoutMs: options.addTimeoutMs } : {}),
    limits: checkArguments(command),
    description: command.description,
  };
}
