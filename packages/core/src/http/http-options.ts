import * as z from 'zod/mini';
import type { Interceptor } from '../transport.js';

// zod/mini rather than zod: the same checks at a twentieth of the bundle size, which a Worker pays
// on every cold start.

/** The `fetch` the transport calls: the global one unless given (a Worker's service binding, a proxy). */
export type FetchFunction = (input: string, init: RequestInit) => Promise<Response>;

function isHttpUrl(value: string): boolean {
  try {
    const parsed = new URL(value);
    return parsed.protocol === 'http:' || parsed.protocol === 'https:';
  } catch {
    return false;
  }
}

const positiveInt = () => z.number().check(z.int(), z.positive());

const transportShape = {
  /** Base URL of the server's HTTP port, e.g. `http://triton:8000` (a path prefix is kept). */
  url: z
    .string()
    .check(z.refine(isHttpUrl, 'url must be an http:// or https:// URL, e.g. http://127.0.0.1:8000')),
  /**
   * Triton's binary tensor data extension: tensors travel as raw bytes after the JSON header.
   * `'auto'` asks the server's metadata once and falls back to JSON tensors when it does not list
   * `binary_tensor_data`. @default "auto"
   */
  binaryData: z._default(z.union([z.literal('auto'), z.boolean()]), 'auto'),
  /** Default deadline for every call, in ms; per-call `timeoutMs` overrides it. @default none */
  timeoutMs: z.optional(positiveInt()),
  /** Headers sent with every call (e.g. authorization). @default {} */
  headers: z._default(z.record(z.string(), z.string()), {}),
  /**
   * Triton's restricted-API value (`--http-restricted-api=<groups>:<accessHeader>=<value>`), sent as
   * the header `accessHeader`. @default none
   */
  accessToken: z.optional(z.string().check(z.minLength(1))),
  /** The header name configured on the server for `accessToken`. @default "triton-access-token" */
  accessHeader: z._default(z.string().check(z.minLength(1)), 'triton-access-token'),
  /** Largest response body read, in bytes (checked against Content-Length and while reading). @default 2 GiB − 1 */
  maxResponseBytes: z._default(positiveInt(), 2 ** 31 - 1),
  /** Largest single server-sent event of `generateStream`, in characters. @default 16 MiB */
  maxEventBytes: z._default(positiveInt(), 16 * 1024 * 1024),
  /** The fetch to call. @default globalThis.fetch */
  fetch: z.optional(
    z.custom<FetchFunction>((value) => typeof value === 'function', 'fetch must be a function'),
  ),
};

/** Options of `createHttpTransport`, validated with `parseOptions`. */
export const httpOptionsSchema = z.strictObject(transportShape);

// An interface, not a type alias, so that the API reference lists every field.
/** Options of `createHttpTransport`. */
export interface HttpTransportOptions extends z.input<typeof httpOptionsSchema> {}
export type ResolvedHttpTransportOptions = z.output<typeof httpOptionsSchema>;

/** Options of `createHttpClient`: the transport's, plus what wraps inference. */
export const httpClientOptionsSchema = z.strictObject({
  ...transportShape,
  /** Wrap inference calls, first listed = outermost. @default [] */
  interceptors: z._default(
    z.array(z.custom<Interceptor>((value) => typeof value === 'function', 'interceptors must be functions')),
    [],
  ),
});

export type HttpClientSchemaOptions = z.input<typeof httpClientOptionsSchema>;
