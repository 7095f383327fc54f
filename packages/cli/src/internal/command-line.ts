import { readFileSync } from 'node:fs';
import { type ParseArgsConfig, parseArgs } from 'node:util';
import {
  type ClientOptions,
  createTritonClient,
  ErrorCode,
  InfergateError,
  type InferTransport,
  type TritonClient,
} from '@infergate/core';
import { createHttpClient } from '@infergate/core/http';
import { type CliIo, ExitCode } from '../cli-io.js';
import { grpcServerClient, httpServerClient, type ServerClient } from './server-client.js';

/** Options every command that talks to a server takes. */
export const CONNECTION_OPTIONS = {
  url: { type: 'string', short: 'u' },
  protocol: { type: 'string' },
  tls: { type: 'boolean' },
  ca: { type: 'string' },
  cert: { type: 'string' },
  key: { type: 'string' },
  token: { type: 'string' },
  'timeout-ms': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const satisfies ParseArgsConfig['options'];

export const CONNECTION_HELP = `Connection options:
  -u, --url HOST:PORT     The server (grpc:// or grpcs:// prefix allowed;
                          http:// or https:// means --protocol http).
                          Default: 127.0.0.1:8001, over http :8000.
  --protocol grpc|http    The wire protocol: gRPC (default) or KServe v2
                          HTTP/REST.
  --tls                   Use TLS with the system's root certificates
                          (over http: an https:// URL).
  --ca FILE               Use TLS, trusting the CA certificate in FILE (PEM).
                          gRPC only.
  --cert FILE --key FILE  Client certificate and key for mutual TLS (PEM).
                          gRPC only.
  --token TOKEN           Send TOKEN as Triton's access token header
                          (triton-access-token over http).
  --timeout-ms MS         Deadline of each call. Default: 10000.
  --json                  Print machine-readable JSON instead of text.
  -h, --help              Print this help.`;

const DEFAULT_URL = '127.0.0.1:8001';
const DEFAULT_TIMEOUT_MS = 10_000;

/** A wrong command line: the command prints it with its usage and exits 2. */
export function usageError(message: string): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, message, { details: { usage: true } });
}

function isUsageError(error: InfergateError): boolean {
  return error.details?.usage === true;
}

/** `parseArgs` with strict checking whose complaints become usage errors. */
type CommandLineOptions = NonNullable<ParseArgsConfig['options']>;
type ParsedArgs<O extends CommandLineOptions> = ReturnType<
  typeof parseArgs<{ args: string[]; options: O; allowPositionals: true; strict: true }>
>;

export function parseCommandLine<O extends CommandLineOptions>(argv: string[], options: O): ParsedArgs<O> {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(error instanceof Error ? error.message : String(error));
  }
}

/** A positive integer option, or its default. */
export function integerOption(value: string | undefined, name: string, fallback: number, min = 1): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isSafeInteger(parsed) || parsed < min) {
    throw usageError(`--${name} must be an integer ≥ ${min}, got '${value}'`);
  }
  return parsed;
}

interface ConnectionValues {
  url?: string | undefined;
  protocol?: string | undefined;
  tls?: boolean | undefined;
  ca?: string | undefined;
  cert?: string | undefined;
  key?: string | undefined;
  token?: string | undefined;
  'timeout-ms'?: string | undefined;
}

/** A PEM file's text; an unreadable file is a usage error naming the option. */
function pemFile(path: string, option: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw usageError(
      `--${option}: cannot read ${path} (${(error as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
}

type Protocol = 'grpc' | 'http';

const HTTP_URL = /^https?:\/\//i;

/** `--protocol`, or http when the URL says so; a URL of the other protocol is a usage error. */
export function protocolOf(values: ConnectionValues): Protocol {
  const url = values.url;
  const protocol = values.protocol ?? (url !== undefined && HTTP_URL.test(url) ? 'http' : 'grpc');
  if (protocol !== 'grpc' && protocol !== 'http') {
    throw usageError(`--protocol must be grpc or http, got '${protocol}'`);
  }
  if (protocol === 'grpc' && url !== undefined && HTTP_URL.test(url)) {
    throw usageError(`--url ${url} is an HTTP URL: use --protocol http (or a gRPC HOST:PORT)`);
  }
  if (protocol === 'http' && url !== undefined && /^grpcs?:\/\//i.test(url)) {
    throw usageError(`--url ${url} is a gRPC URL: --protocol http needs http:// or https://`);
  }
  return protocol;
}

/** A usage error for a command (or an option) that needs gRPC, when the protocol is http. */
export function requireGrpc(values: ConnectionValues, what: string, why: string): void {
  if (protocolOf(values) === 'http') throw usageError(`${what} is not available over HTTP: ${why}`);
}

const DEFAULT_HTTP_URL = 'http://127.0.0.1:8000';

/**
 * An HTTP client for the connection options. The transport is `fetch`, which takes no CA or client
 * certificate, so those are refused rather than silently ignored; `--tls` turns a bare HOST:PORT
 * into https:// (the system's roots, or NODE_EXTRA_CA_CERTS).
 */
function httpClientFor(values: ConnectionValues, timeoutMs: number): ServerClient {
  for (const option of ['ca', 'cert', 'key'] as const) {
    if (values[option] !== undefined) {
      throw usageError(
        `--${option} is gRPC only: over HTTP use an https:// URL whose certificate the system ` +
          'trusts (or NODE_EXTRA_CA_CERTS=FILE)',
      );
    }
  }
  const given = values.url ?? DEFAULT_HTTP_URL;
  let url = given;
  if (!HTTP_URL.test(given)) url = `${values.tls === true ? 'https' : 'http'}://${given}`;
  else if (values.tls === true && !/^https:/i.test(given)) {
    throw usageError(`--tls with --url ${given}: use an https:// URL`);
  }
  let client: ReturnType<typeof createHttpClient>;
  try {
    client = createHttpClient({
      url,
      timeoutMs,
      ...(values.token !== undefined ? { accessToken: values.token } : {}),
    });
  } catch (error) {
    // A URL that does not parse, or a token no HTTP header can carry, is the user's command line,
    // not the server: name the option it came from.
    const message = InfergateError.from(error).rawMessage;
    const token = /^accessToken: (.*)$/s.exec(message);
    throw usageError(token !== null ? `--token: ${token[1]}` : `--url: ${message}`);
  }
  return httpServerClient(client);
}

/**
 * A gRPC client for the command's connection options; the caller closes it. `overrides` lets a
 * command that measures (perf) turn shared memory on or put a batcher in front.
 */
export function clientFor(
  values: ConnectionValues,
  overrides: Pick<ClientOptions, 'enableGpuIpc'> & { transport?: InferTransport } = {},
): { client: TritonClient; timeoutMs: number } {
  const protocol = protocolOf(values);
  if (protocol === 'http') throw usageError('this command speaks gRPC only, not --protocol http');
  const timeoutMs = integerOption(values['timeout-ms'], 'timeout-ms', DEFAULT_TIMEOUT_MS);
  if ((values.cert === undefined) !== (values.key === undefined)) {
    throw usageError('--cert and --key go together (mutual TLS needs both)');
  }
  const files = {
    ...(values.ca !== undefined ? { ca: pemFile(values.ca, 'ca') } : {}),
    ...(values.cert !== undefined ? { cert: pemFile(values.cert, 'cert') } : {}),
    ...(values.key !== undefined ? { key: pemFile(values.key, 'key') } : {}),
  };
  const tls = Object.keys(files).length > 0 ? files : values.tls === true ? true : undefined;
  const client = createTritonClient({
    url: values.url ?? DEFAULT_URL,
    ...(tls !== undefined ? { tls } : {}),
    ...(values.token !== undefined ? { accessToken: values.token } : {}),
    timeoutMs,
    // A one-shot command gains nothing from shared memory and should leave no regions behind.
    enableGpuIpc: false,
    tracing: false,
    ...overrides,
  });
  return { client, timeoutMs };
}

/** A client over the chosen protocol (`--protocol`, or the URL's scheme); the caller closes it. */
export function serverClientFor(values: ConnectionValues): { client: ServerClient; timeoutMs: number } {
  if (protocolOf(values) === 'grpc') {
    const { client, timeoutMs } = clientFor(values);
    return { client: grpcServerClient(client), timeoutMs };
  }
  const timeoutMs = integerOption(values['timeout-ms'], 'timeout-ms', DEFAULT_TIMEOUT_MS);
  return { client: httpClientFor(values, timeoutMs), timeoutMs };
}

/** JSON with bigints as numbers when safe, else strings, and typed arrays as plain arrays. */
export function toJson(value: unknown, indent = 2): string {
  return JSON.stringify(
    value,
    (_key, item: unknown) => {
      if (typeof item === 'bigint') {
        return item <= BigInt(Number.MAX_SAFE_INTEGER) && item >= BigInt(Number.MIN_SAFE_INTEGER)
          ? Number(item)
          : item.toString();
      }
      if (ArrayBuffer.isView(item) && !(item instanceof DataView)) {
        return Array.from(item as unknown as ArrayLike<number | bigint>, (element) =>
          typeof element === 'bigint' ? Number(element) : element,
        );
      }
      return item;
    },
    indent,
  );
}

/**
 * Runs a command body: prints its help on `--help`, turns what it throws into a message on stderr
 * (JSON with `--json`) and the exit code (2 for a wrong command line, 1 for everything else).
 */
export async function runCommand(
  io: CliIo,
  usage: string,
  argv: string[],
  body: () => Promise<number>,
): Promise<number> {
  if (argv.includes('--help') || argv.includes('-h')) {
    io.stdout(`${usage}\n`);
    return ExitCode.Ok;
  }
  try {
    return await body();
  } catch (thrown) {
    const error = InfergateError.from(thrown);
    const json = argv.includes('--json');
    if (json) io.stderr(`${toJson({ error: { code: error.code, message: error.rawMessage } }, 0)}\n`);
    else io.stderr(`infergate: ${error.code}: ${error.rawMessage}\n`);
    if (isUsageError(error)) {
      // The usage line and a pointer to the full help, not the whole help: the error stays visible.
      const [usageLine = ''] = usage.split('\n');
      const name = /^Usage: (infergate [a-z-]+)/.exec(usageLine)?.[1] ?? 'infergate';
      if (!json) io.stderr(`${usageLine}\nRun '${name} --help' for the options.\n`);
      return ExitCode.Usage;
    }
    return ExitCode.Failure;
  }
}

/** Creates a client (gRPC or HTTP), runs `use`, and closes the client whatever happens. */
export async function withClient<T>(
  values: ConnectionValues,
  use: (client: ServerClient, timeoutMs: number) => Promise<T>,
): Promise<T> {
  const { client, timeoutMs } = serverClientFor(values);
  try {
    return await use(client, timeoutMs);
  } finally {
    await client.close();
  }
}

/** Exactly `count` positionals, named in the message when some are missing or extra. */
export function positionals(values: string[], names: readonly string[], optional = 0): string[] {
  const required = names.length - optional;
  if (values.length < required) throw usageError(`missing ${names[values.length]}`);
  if (values.length > names.length) throw usageError(`unexpected argument '${values[names.length]}'`);
  return values;
}
