import type * as Zod from 'zod';
import type { z } from 'zod';
import { ErrorCode, InfergateError } from './errors.js';
import { assertSafeHeaders } from './header-values.js';
import { acceptClientOptions, MAX_MESSAGE_BYTES } from './internal/accept-client-options.js';
import { loadZod } from './internal/lazy-modules.js';
import { parseOptions } from './parse-options.js';
import type { Interceptor } from './transport.js';

type ZodNamespace = typeof Zod.z;

export { MAX_MESSAGE_BYTES };

/** Builds the client options schema; zod loads on first use (see internal/lazy-modules.ts). */
function buildClientOptionsSchema(z: ZodNamespace) {
  const pem = z.union([z.string().min(1), z.instanceof(Uint8Array)]);

  const tlsOptionsSchema = z
    .object({
      /** CA certificate(s): PEM text, a Buffer, or a file path. Default: the system roots. */
      ca: pem.optional(),
      /** Client certificate for mTLS. */
      cert: pem.optional(),
      /** Client private key for mTLS. */
      key: pem.optional(),
      /** Override the name checked against the server certificate. */
      serverName: z.string().min(1).optional(),
    })
    .strict();

  return z
    .object({
      /**
       * `host:port`, `grpc://host:port` (plaintext) or `grpcs://host:port` (TLS); calls are spread over a list
       * of IP endpoints (see `loadBalancing`). `http://` and `https://` are read as
       * `grpc://` and `grpcs://` (the scheme only chooses TLS): the port must still be the gRPC one
       * (Triton's 8001, not its HTTP 8000). Without a port: 8001, or 443 with TLS.
       */
      url: z
        .union([
          z.string().min(1, 'url must be host:port, grpc://host:port or grpcs://host:port'),
          z.array(z.string().min(1)).min(1, 'url list must not be empty'),
        ])
        .optional(),
      /**
       * How calls spread over several urls: `round_robin` over every reachable one, or
       * `pick_first`, the first in the order given that is reachable, until it fails. Both engines
       * honour it. With several urls, a call whose endpoint refuses the connection (nothing was
       * sent) moves to another endpoint within its deadline instead of failing. @default "round_robin"
       */
      loadBalancing: z.enum(['round_robin', 'pick_first']).default('round_robin'),
      /**
       * What carries inference (ModelInfer, and ModelStreamInfer for `stream()`): `http2`, a lean
       * gRPC client on its own HTTP/2 layer over a TCP or TLS socket (decision 0017), or `grpc-js`. Management calls and stream
       * sessions use grpc-js either way. Unset, it is `http2`, unless `channelOptions` holds a key
       * the http2 engine does not honour (it honours the reconnect backoff and keepalive keys):
       * then `grpc-js`. `http2` with such a key is refused. @default "http2"
       */
      engine: z.enum(['grpc-js', 'http2']).optional(),
      /** Compress requests (responses follow the server's choice). @default "none" */
      compression: z.enum(['none', 'deflate', 'gzip']).default('none'),
      /**
       * Send large input tensors through system shared memory when the server is on this host and
       * advertises it; otherwise plain gRPC. @default true
       */
      enableGpuIpc: z.boolean().default(true),
      sharedMemory: z
        .object({
          /** Inputs at least this large use shared memory. @default 1 MiB */
          thresholdBytes: z
            .number()
            .int()
            .positive()
            .default(1024 * 1024),
          /** Pooled regions (one request each at a time). @default 4 */
          maxRegions: z.number().int().positive().default(4),
          /** Largest pooled region. @default 1 GiB */
          maxRegionBytes: z
            .number()
            .int()
            .positive()
            .default(1024 ** 3),
        })
        .strict()
        .default({ thresholdBytes: 1024 * 1024, maxRegions: 4, maxRegionBytes: 1024 ** 3 }),
      /** Default deadline for every call, in ms; per-call `timeoutMs` overrides it. @default none */
      timeoutMs: z.number().int().positive().optional(),
      /**
       * Metadata sent with every call (e.g. authorization). Values must be visible ASCII (CR, LF and
       * non-ASCII are refused). @default {}
       */
      headers: z
        .record(z.string(), z.string())
        .default({})
        .superRefine((headers, context) => {
          try {
            assertSafeHeaders(headers);
          } catch (error) {
            context.addIssue({ code: 'custom', message: (error as InfergateError).rawMessage });
          }
        }),
      /**
       * Triton's restricted-API access value (`--grpc-restricted-protocol=<groups>:<header>=<value>`).
       * Sent as gRPC metadata `triton-grpc-protocol-<accessHeader>`, the key Triton checks.
       */
      accessToken: z
        .string()
        .min(1)
        .regex(/^[\t\x20-\x7e]*$/, 'accessToken must be visible ASCII (CR, LF and non-ASCII are refused)')
        .optional(),
      /** The header name configured on the server for `accessToken`. @default "triton-access-token" */
      accessHeader: z.string().min(1).default('triton-access-token'),
      /** TLS: `true` for system roots, or certificates for TLS / mTLS. @default false unless grpcs:// */
      tls: z.union([z.boolean(), tlsOptionsSchema]).optional(),
      keepalive: z
        .object({
          /** Ping the server after this long without activity. @default 30000 */
          timeMs: z.number().int().positive().default(30_000),
          /** Close the connection if a ping is not answered within this. @default 10000 */
          timeoutMs: z.number().int().positive().default(10_000),
          /** Ping even when no call is active. @default false */
          permitWithoutCalls: z.boolean().default(false),
        })
        .strict()
        .default({ timeMs: 30_000, timeoutMs: 10_000, permitWithoutCalls: false }),
      /**
       * Largest message sent or received, in bytes. A request over it fails before it is sent, and a
       * response over it fails, both with a non-retryable INVALID_ARGUMENT naming this option; raise
       * it (up to 2 GiB − 1) or send large tensors through shared memory (docs/errors.md).
       * @default 2 GiB − 1 (grpc-js defaults to 4 MiB receive)
       */
      maxMessageBytes: z.number().int().positive().max(MAX_MESSAGE_BYTES).default(MAX_MESSAGE_BYTES),
      /** Record an OpenTelemetry client span per RPC (a no-op unless an SDK is registered). @default true */
      tracing: z.boolean().default(true),
      /** Wrap inference calls, first listed = outermost. @default [] */
      interceptors: z
        .array(
          z.custom<Interceptor>((value) => typeof value === 'function', 'interceptors must be functions'),
        )
        .default([]),
      /**
       * Extra grpc-js channel options (advanced). Keys other than `grpc.initial_reconnect_backoff_ms`,
       * `grpc.max_reconnect_backoff_ms` and `grpc.keepalive_*` move inference to grpc-js (see `engine`).
       * Each client's grpc-js channel has connections of its own (`grpc.use_local_subchannel_pool`
       * is 1 unless set here), not ones shared with the process's other clients of the same address.
       */
      channelOptions: z.record(z.string(), z.union([z.string(), z.number()])).default({}),
    })
    .strict();
}

type ClientOptionsSchema = ReturnType<typeof buildClientOptionsSchema>;
let clientSchema: ClientOptionsSchema | undefined;

/** The zod schema of `createTritonClient` options (every default documented with @default). */
export function clientOptionsSchema(): ClientOptionsSchema {
  clientSchema ??= buildClientOptionsSchema(loadZod());
  return clientSchema;
}

// An interface, not a type alias, so that the API reference lists every field.
/**
 * `createTritonClient` options. `url` is required unless the client is given a `transport` (a
 * batcher, a router, an in-memory transport); without a url, management calls fail with
 * FAILED_PRECONDITION.
 */
export interface ClientOptions extends z.input<ClientOptionsSchema> {}
export type ResolvedClientOptions = z.output<ClientOptionsSchema>;

/** `createGrpcTransport` options: the client options without interceptors, `url` required. */
export type GrpcTransportOptions = Omit<ClientOptions, 'interceptors' | 'url'> & {
  url: string | string[];
};
/** Resolved options of one gRPC endpoint (a url is known). */
export type ResolvedGrpcTransportOptions = ResolvedClientOptions & { url: string | string[] };

/**
 * Validates client options as `parseOptions(clientOptionsSchema(), options, what)` does, with the
 * same result and the same error, but loads zod only for options it cannot accept at once (valid
 * ones never need it: a cold start does not pay for loading zod). Decision 0025.
 */
export function parseClientOptions(options: unknown, what: string): ResolvedClientOptions {
  return acceptClientOptions(options) ?? parseOptions(clientOptionsSchema(), options, what);
}

/** Validates gRPC endpoint options; INVALID_ARGUMENT when `url` is missing or anything is bad. */
export function parseGrpcTransportOptions(options: unknown, what: string): ResolvedGrpcTransportOptions {
  const resolved = parseClientOptions(options, what);
  if (resolved.url === undefined) {
    throw new InfergateError(ErrorCode.InvalidArgument, `invalid ${what}: url: required`);
  }

  return resolved as ResolvedGrpcTransportOptions;
}

export { describeIssues, parseOptions } from './parse-options.js';

export interface Endpoint {
  /** `host:port` as grpc-js expects it. */
  target: string;
  host: string;
  port: number;
  secure: boolean;
}

const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/**
 * The grpc-js target for one or several endpoints. Several are joined into an `ipv4:`/`ipv6:`
 * address list, which grpc-js balances itself; they must be IP literals of one family.
 */
export function channelTarget(endpoints: readonly Endpoint[]): string {
  const [first] = endpoints;
  if (first === undefined) throw new InfergateError(ErrorCode.InvalidArgument, 'no endpoint given');
  if (endpoints.length === 1) return first.target;
  const family = (host: string) => (IPV4.test(host) ? 'ipv4' : host.includes(':') ? 'ipv6' : undefined);
  const families = new Set(endpoints.map((endpoint) => family(endpoint.host)));
  const [only] = families;
  if (families.size !== 1 || only === undefined) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      'several urls must all be IPv4 or all IPv6 literals (use one DNS name with several records instead)',
    );
  }
  if (new Set(endpoints.map((endpoint) => endpoint.secure)).size !== 1) {
    throw new InfergateError(ErrorCode.InvalidArgument, 'several urls must all use TLS or all not');
  }
  return `${only}:${endpoints.map((endpoint) => endpoint.target).join(',')}`;
}

export function parseEndpoint(url: string): Endpoint {
  const match = /^(?:(grpcs?|https?):\/\/)?(\[[^\]]+\]|[^:/\s]+)(?::(\d+))?\/?$/.exec(url.trim());
  if (!match) {
    throw new InfergateError(
      ErrorCode.InvalidArgument,
      `invalid url '${url}': expected host:port, grpc://host:port or grpcs://host:port`,
    );
  }
  const scheme = match[1];
  const host = match[2] as string;
  const secure = scheme === 'grpcs' || scheme === 'https';
  const port = match[3] !== undefined ? Number(match[3]) : secure ? 443 : 8001;
  if (port < 1 || port > 65535)
    throw new InfergateError(ErrorCode.InvalidArgument, `invalid url '${url}': bad port`);
  return { target: `${host}:${port}`, host: host.replace(/^\[|\]$/g, ''), port, secure };
}
