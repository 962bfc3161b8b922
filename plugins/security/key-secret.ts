/**
 * The key secret on JSON-RPC: HTTP basic with an empty user and the secret as the password
 * (`Authorization: Basic base64(":<secret>")`, what `curl -u :<secret>` sends), as hosted node services
 * take it.
 *
 * @module
 */
import type { RequestContext } from '../../core/plugin-api.js';

const BASIC = /^Basic[ \t]+([A-Za-z0-9+/]+={0,2})[ \t]*$/i;

/** The `Authorization` header of a call (for WebSocket: of the upgrade request), if any. */
export function authorizationOf(ctx: RequestContext): string | undefined {
  const value = ctx.meta.headers?.authorization;
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The key secret a call carries: the transport's own (an API that takes a secret, such as the
 * file-storage API), or the password of `Authorization: Basic` with an empty user. Undefined when there
 * is none; a basic header with a user is not a key secret.
 */
export function keySecretOf(ctx: RequestContext): string | undefined {
  if (ctx.credentials.secret !== undefined && ctx.credentials.secret !== '') return ctx.credentials.secret;
  const match = BASIC.exec(authorizationOf(ctx) ?? '');
  if (match === null) return undefined;
  const decoded = Buffer.from(match[1]!, 'base64').toString('utf8');
  if (!decoded.startsWith(':') || decoded.length === 1) return undefined;
  return decoded.slice(1);
}

/** The token of `Authorization: Bearer <token>`, if the call carries one. */
export function bearerTokenOf(ctx: RequestContext): string | undefined {
  const match = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(authorizationOf(ctx) ?? '');
  return match?.[1];
}
