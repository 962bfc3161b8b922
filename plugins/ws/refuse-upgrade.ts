import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { encodeError, type GatewayError } from '../../core/index.js';

/** Answers an upgrade request with a plain HTTP error (JSON-RPC error body) and closes the socket. */
export function refuseUpgrade(socket: Duplex, error: GatewayError): void {
  const body = encodeError(null, error.toJSON());
  socket.end(
    `HTTP/1.1 ${error.httpStatus} ${STATUS_CODES[error.httpStatus] ?? 'Error'}\r\n` +
      'Connection: close\r\nContent-Type: application/json\r\n' +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
