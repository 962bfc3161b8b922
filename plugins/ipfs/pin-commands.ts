import type { JsonSchema } from '../../core/plugin-api.js';
import type { IpfsCommand } from './commands.js';

/** Go's `strconv.ParseBool` values, and the empty value a bare flag has. */
const BOOL: JsonSchema = { type: 'string', pattern: '^(|1|t|T|TRUE|true|True|0|f|F|FALSE|false|False)$', description: 'true or false' };

/**
 * The pin commands. The gateway serves them from the key's own pins (the `Tokens.PinStore`), asking the
 * node only to pin, unpin and weigh content: see `stages/pins.ts`. Priced in credits: a pin costs the node
 * a walk of the whole DAG.
 */
export const PIN_COMMANDS: readonly IpfsCommand[] = [
  {
    name: 'pin/add',
    kind: 'write',
    body: false,
    argument: 'ipfs-path',
    variadic: true,
    options: { recursive: BOOL, r: BOOL, progress: BOOL, name: { type: 'string', maxLength: 255 } },
    stream: false,
    credits: 10,
    description: 'Pins content (recursively) as the key\'s own, weighed against the plan\'s `storageBytes`; answers `{"Pins":[...]}`.',
  },
  {
    name: 'pin/ls',
    kind: 'read',
    argument: 'ipfs-path',
    argumentCount: { min: 0, max: 1000 },
    options: { type: { enum: ['all', 'recursive', 'direct', 'indirect'] }, t: { enum: ['all', 'recursive', 'direct', 'indirect'] }, quiet: BOOL, q: BOOL, stream: BOOL, s: BOOL, names: BOOL, n: BOOL, name: { type: 'string', maxLength: 255 } },
    stream: false,
    credits: 1,
    description: 'The key\'s own pins: `{"Keys":{"<cid>":{"Type":"recursive"}}}`, or NDJSON `{"Cid","Type"}` with `stream=true`.',
  },
  {
    name: 'pin/rm',
    kind: 'write',
    body: false,
    argument: 'ipfs-path',
    variadic: true,
    options: { recursive: BOOL, r: BOOL },
    stream: false,
    credits: 2,
    description: 'Removes the key\'s own pins (the node unpins only content no other key pins); answers `{"Pins":[...]}`.',
  },
  {
    name: 'pin/update',
    kind: 'write',
    body: false,
    argument: 'from-path',
    argumentCount: { min: 2, max: 2 },
    options: { unpin: BOOL },
    stream: false,
    credits: 10,
    description: 'Moves one of the key\'s pins from one CID to another (`unpin=false` keeps the old); answers `{"Pins":[from,to]}`.',
  },
];
