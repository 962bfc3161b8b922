import { Errors, GatewayError } from '../../core/plugin-api.js';

/** The header that names the gateway's error on a file-storage refusal whose kubo body cannot say it. */
export const ERROR_NAME_HEADER = 'x-tollgate-error';

/** The refusal of a call that would take a key's pinned bytes past its plan's `storageBytes`. */
export function storageLimitReached(limitBytes: number, storedBytes: number, addingBytes?: number): GatewayError {
  const adding = addingBytes === undefined ? '' : `, adding ${addingBytes}`;
  return new GatewayError(Errors.STORAGE_LIMIT_REACHED, {
    message: `storage limit reached: the plan allows ${limitBytes} bytes pinned, the key has ${storedBytes}${adding}`,
    data: { storageBytes: limitBytes, storedBytes, ...(addingBytes === undefined ? {} : { addingBytes }) },
    headers: { [ERROR_NAME_HEADER]: Errors.STORAGE_LIMIT_REACHED.name },
  });
}
