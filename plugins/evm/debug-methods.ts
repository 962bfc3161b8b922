/**
 * The `debug_` namespace: transaction and block tracing, and the raw encodings of chain data. Tracing
 * is heavy for a node, so the namespace is off unless the operator turns it on (`plugins.evm.debug`),
 * has its own prices, and may be limited to some plans.
 *
 * @module
 */
import type { MethodDefinition } from '../../core/family-api.js';
import { callObject, blockOverrides, stateOverride } from './call-object.js';
import { blockId, blockNumberOrTag, hash32, positional } from './schemas.js';

/** A tracer configuration (`tracer`, `tracerConfig`, `timeout`, struct-logger flags): checked by the node. */
const traceConfig = { type: ['object', 'null'] } as const;

/** `debug_traceCall`'s config: a trace config plus state and block overrides, checked by the node. */
const traceCallConfig = { type: ['object', 'null'], properties: { stateOverrides: stateOverride, blockOverrides } } as const;

/** Every method of the `debug_` namespace, with its default price. */
export const EVM_DEBUG_METHODS: readonly MethodDefinition[] = [
  {
    name: 'debug_traceTransaction',
    params: positional([hash32, traceConfig], 1),
    paramNames: ['transactionHash', 'config'],
    credits: 1_000,
    failover: false,
    idempotent: true,
    description: 'Replays a mined transaction with a tracer (struct logs, callTracer, prestateTracer...).',
  },
  {
    name: 'debug_traceCall',
    params: positional([callObject(), blockId, traceCallConfig], 1),
    paramNames: ['call', 'block', 'config'],
    credits: 1_000,
    failover: false,
    idempotent: true,
    description: 'Runs a call on a block\'s state with a tracer, without creating a transaction.',
  },
  {
    name: 'debug_traceBlockByNumber',
    params: positional([blockNumberOrTag, traceConfig], 1),
    paramNames: ['block', 'config'],
    credits: 2_000,
    failover: false,
    idempotent: true,
    description: 'Replays every transaction of a block given by number or tag with a tracer.',
  },
  {
    name: 'debug_traceBlockByHash',
    params: positional([hash32, traceConfig], 1),
    paramNames: ['blockHash', 'config'],
    credits: 2_000,
    failover: false,
    idempotent: true,
    description: 'Replays every transaction of a block given by hash with a tracer.',
  },
  {
    name: 'debug_getRawHeader',
    params: positional([blockId], 1),
    paramNames: ['block'],
    credits: 80,
    failover: false,
    idempotent: true,
    description: 'The RLP encoding of a block header.',
  },
  {
    name: 'debug_getRawBlock',
    params: positional([blockId], 1),
    paramNames: ['block'],
    credits: 150,
    failover: false,
    idempotent: true,
    description: 'The RLP encoding of a block.',
  },
  {
    name: 'debug_getRawReceipts',
    params: positional([blockId], 1),
    paramNames: ['block'],
    credits: 1_000,
    failover: false,
    idempotent: true,
    description: 'The consensus encodings of every receipt of a block.',
  },
  {
    name: 'debug_getRawTransaction',
    params: positional([hash32], 1),
    paramNames: ['transactionHash'],
    credits: 80,
    failover: false,
    idempotent: true,
    description: 'The encoding of a transaction, by hash.',
  },
];
