import { ContextKey } from '../../core/plugin-api.js';

/** What the transport hands the protocol about the HTTP request of a file-storage call. */
export interface IpfsRequest {
  /** The request body to forward (`add`'s multipart upload), streamed. */
  readonly body?: NodeJS.ReadableStream;
  /** The client's `Content-Type`, forwarded with the body. */
  readonly contentType?: string;
}

/** The HTTP request of a file-storage call, set by the transport. */
export const IPFS_REQUEST = new ContextKey<IpfsRequest>('ipfs.request');

/**
 * Set when `object/get` is served from the raw block (`block/get`) because the upstream lacks the
 * command: the protocol then asks for the block, and the fallback stage renders it.
 */
export const OBJECT_FROM_BLOCK = new ContextKey<boolean>('ipfs.objectFromBlock');
