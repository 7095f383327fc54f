import { randomUUID } from 'node:crypto';
import type { HttpRequest } from './http-types.js';

/** A caller's id is echoed in a header and in logs: printable ASCII, no spaces, bounded. */
const VALID_REQUEST_ID = /^[\x21-\x7e]{1,128}$/;

/** The caller's id when it is a safe value (printable ASCII, no spaces, 1–128 characters), else a new UUID. */
export function safeRequestId(given: string | null | undefined): string {
  return typeof given === 'string' && VALID_REQUEST_ID.test(given) ? given : randomUUID();
}

/** The header carrying the caller's request id. */
export const DEFAULT_REQUEST_ID_HEADER = 'x-request-id';

/**
 * The request's id: the one the infergate() middleware gave it, else the caller's header when it is
 * a safe value, else a new UUID, so that errors raised before the middleware ran (a body parser's)
 * carry an id too. The id is remembered on the request.
 */
export function requestIdOf(request: HttpRequest, header = DEFAULT_REQUEST_ID_HEADER): string {
  if (request.infergate !== undefined) return request.infergate.requestId;
  const remembered = (request as { infergateRequestId?: unknown }).infergateRequestId;
  if (typeof remembered === 'string') return remembered;
  const raw = request.headers[header.toLowerCase()];
  const id = safeRequestId(Array.isArray(raw) ? raw[0] : raw);
  Object.defineProperty(request, 'infergateRequestId', { value: id, configurable: true });
  return id;
}
