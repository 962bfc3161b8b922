import type { Duplex } from 'node:stream';
import { STATUS_CODES } from 'node:http';
import { encodeError } from '../../core/transport-api.js';
import { type GatewayError } from '../../core/plugin-api.js';

/** Answers an upgrade request with a plain HTTP error (JSON-RPC error body, the error's headers) and closes the socket. */
export function refuseUpgrade(socket: Duplex, error: GatewayError): void {
  const body = encodeError(null, error.toJSON());
  let extra = '';
  for (const [name, value] of Object.entries(error.headers ?? {})) extra += `${name}: ${value}\r\n`;
  socket.end(
    `HTTP/1.1 ${error.httpStatus} ${STATUS_CODES[error.httpStatus] ?? 'Error'}\r\n` +
      `Connection: close\r\nContent-Type: application/json\r\n${extra}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
