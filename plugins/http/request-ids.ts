import type { JsonRpcId } from '../../core/plugin-api.js';

function idOf(request: unknown): JsonRpcId | undefined {
  if (typeof request !== 'object' || request === null || !('id' in request)) return undefined;
  const id = (request as { id: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' || id === null ? id : undefined;
}

/**
 * The ids of a JSON-RPC body the gateway will not run (it is shutting down), so that the refusal answers
 * each request by its id as JSON-RPC asks: one id for a single request, one per request of a batch
 * (notifications, which get no answer, left out); `null` for a body that is not JSON-RPC.
 */
export function requestIds(body: Buffer): { readonly batch: false; readonly id: JsonRpcId } | { readonly batch: true; readonly ids: readonly JsonRpcId[] } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return { batch: false, id: null };
  }
  if (Array.isArray(parsed)) return { batch: true, ids: parsed.flatMap((request) => { const id = idOf(request); return id === undefined ? [] : [id]; }) };
  return { batch: false, id: idOf(parsed) ?? null };
}
