import { ErrorCode, InfergateError } from './errors.js';
import { isPlainObject } from './internal/plain-object.js';

/** Visible ASCII, space and tab: what HTTP/1, HTTP/2 and gRPC all accept in a header value. */
const SAFE_VALUE = /^[\t\x20-\x7e]*$/;
/** An HTTP token (RFC 9110 §5.6.2), lower or upper case. */
const SAFE_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/**
 * Refuses header names that are not HTTP tokens and values with CR, LF, other control characters
 * or non-ASCII: they could split a header (injection) or be dropped or mangled on the way. The
 * error names the header, never its value (which may be a credential).
 */
export function assertSafeHeaders(headers: Readonly<Record<string, string>>, what = 'headers'): void {
  // Headers are read with Object.entries, which skips symbol keys and reads a string or an array by
  // index: anything but a plain object would be sent as something else than what was meant, or not at
  // all. Refused here with the same error a bad client `headers` option gets.
  if (!isPlainObject(headers)) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `${what}: must be a plain object of header names and values`,
    );
  }
  for (const key of Object.getOwnPropertySymbols(headers)) {
    if (Object.prototype.propertyIsEnumerable.call(headers, key)) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `${what}: header name ${String(key)} is not a valid HTTP token`,
      );
    }
  }
  for (const [name, value] of Object.entries(headers)) {
    if (!SAFE_NAME.test(name)) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `${what}: header name ${JSON.stringify(name)} is not a valid HTTP token`,
      );
    }
    if (typeof value !== 'string' || !SAFE_VALUE.test(value)) {
      throw new InfergateError(
        ErrorCode.InvalidArgument,
        `${what}: the value of header '${name}' holds CR, LF, another control character or non-ASCII text (value not shown)`,
      );
    }
  }
}

/**
 * Refuses headers whose make `Object.entries` would misread (a symbol key, a Map, an array, a
 * string: what `assertSafeHeaders` refuses besides names and values), with its error; names and
 * values are left to the caller. For a transport whose wire takes more than `assertSafeHeaders`
 * lets through (fetch sends a Latin-1 value as it was given).
 */
export function assertHeadersRecord(headers: Readonly<Record<string, string>>, what: string): void {
  if (!isPlainObject(headers) || hasEnumerableSymbol(headers)) assertSafeHeaders(headers, what);
}

function hasEnumerableSymbol(value: object): boolean {
  for (const key of Object.getOwnPropertySymbols(value))
    if (Object.prototype.propertyIsEnumerable.call(value, key)) return true;
  return false;
}

/**
 * The error for one header that a transport's wire refused (fetch's `Headers` throws a TypeError
 * quoting the value): `assertSafeHeaders`'s error for that header alone, which names it and not its
 * value. Never the wire's own error, nor as a cause: it may quote a credential.
 */
export function refusedHeader(name: string, value: string, what: string): InfergateError {
  try {
    assertSafeHeaders({ [name]: value }, what);
  } catch (error) {
    if (error instanceof InfergateError) return error;
  }
  return new InfergateError(
    ErrorCode.InvalidArgument,
    `${what}: header '${SAFE_NAME.test(name) ? name : '?'}' cannot be sent (value not shown)`,
  );
}
