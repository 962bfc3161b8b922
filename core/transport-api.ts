/**
 * For authors of transports: the runtime a transport drives, the JSON-RPC input and output it exchanges
 * with the pipeline, and the HTTP kit the bundled transports share (body refusal, in-flight tracking, the
 * client address behind trusted proxies, key paths, secret checks, the JSON member scanner). Import it as
 * `tollgate/transport`.
 *
 * @packageDocumentation
 */
import 'reflect-metadata';

export type { Transport } from './contracts/plugin.js';
export type { GatewayRuntime, ContextInit, KeyAccess, KeyCheck } from './contracts/runtime.js';
export type { StreamOutcome } from './contracts/stream-outcome.js';
export { InFlightResponses } from './http/in-flight.js';
export { continueBody, refuseBody } from './http/body-refusal.js';
export { clientAddress } from './http/client-address.js';
export { apiKeyFromPath } from './keys/key-path.js';
export { encodeError } from './jsonrpc/encode.js';
export { type JsonRpcInput, type JsonRpcOutput, SERVED_BY_HEADER } from './jsonrpc/json-rpc-engine.js';
export type { CancelSignal } from './contracts/cancel-signal.js';
export { SecretVerifier, type SecretCheck } from './keys/secret-verifier.js';
export { objectMembers, arrayElements, memberRange, type JsonMember } from './jsonrpc/scan.js';
export type { EventMeter, EventCharge, EventTaken, MeteredEvent, EventRefund } from './metering/event-meter.js';
export type { MountOptions, MountedGateway, MountRoutes, NextHandler } from './gateway/mount.js';
export type { NetworkDirectory, AddressedNetwork } from './contracts/network-directory.js';
export { decodeSecretHash, SECRET_SCRYPT_PARAMS, type DecodedSecretHash } from './keys/secret-hash.js';
