import type { CliIo } from '../cli-io.js';
import {
  integerOption,
  parseCommandLine,
  positionals,
  runCommand,
  toJson,
  usageError,
} from '../internal/command-line.js';

export const summary = 'Start the reference Triton server and fake LLM APIs';

export const usage = `Usage: infergate serve-test [options]

Starts, in this process, the reference Triton-compatible gRPC server of
@infergate/testing (models identity, add_sub, simulated_gpu, fail,
repeat, accumulate and generate) and fake OpenAI and Anthropic HTTP
servers that speak the real wire formats. Prints where each listens,
then serves until Ctrl-C (SIGINT) or SIGTERM.

Options:
  --host HOST             Where the Triton server listens.
                          Default: 127.0.0.1.
  --port PORT             The Triton server's port (0 picks a free one).
                          Default: 8001.
  --http-port PORT        Also serve KServe v2 HTTP/REST on this port
                          (0 picks a free one), as Triton does on 8000.
                          Default: gRPC only.
  --transport NAME        What serves the Triton server's gRPC: lean (its
                          own server on a plain socket with core's HTTP/2
                          frames), http2 (the same on node:http2) or
                          grpc-js (the @grpc/grpc-js server, kept for one
                          release).
                          Default: lean.
  --no-llm                Start only the Triton server.
  --json                  Print the addresses as one JSON line.
  -h, --help              Print this help.

The fake LLM servers listen on free ports of 127.0.0.1.`;

export async function run(argv: string[], io: CliIo): Promise<number> {
  return runCommand(io, usage, argv, async () => {
    const { values, positionals: rest } = parseCommandLine(argv, {
      host: { type: 'string' },
      port: { type: 'string' },
      'http-port': { type: 'string' },
      transport: { type: 'string' },
      'no-llm': { type: 'boolean' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    });
    positionals(rest, []);
    const port = integerOption(values.port, 'port', 8001, 0);
    if (port > 65535) throw usageError(`--port must be at most 65535, got ${port}`);
    const httpPort =
      values['http-port'] === undefined ? undefined : integerOption(values['http-port'], 'http-port', 0, 0);
    if (httpPort !== undefined && httpPort > 65535)
      throw usageError(`--http-port must be at most 65535, got ${httpPort}`);
    const transport = values.transport ?? 'lean';
    if (transport !== 'http2' && transport !== 'lean' && transport !== 'grpc-js')
      throw usageError(`--transport must be lean, http2 or grpc-js, got '${transport}'`);
    const { signal } = io;
    if (signal === undefined)
      throw usageError('serve-test needs io.signal: it serves until that signal aborts');
    // Loaded on demand: the other commands should not pay for the test servers' start-up.
    const testing = await import('@infergate/testing');
    const triton = await testing.startTestServer({
      host: values.host ?? '127.0.0.1',
      port,
      transport,
      ...(httpPort === undefined ? {} : { http: { port: httpPort } }),
    });
    const fakes =
      values['no-llm'] === true
        ? []
        : await Promise.all([testing.startFakeOpenAI(), testing.startFakeAnthropic()]);
    const [openai, anthropic] = fakes;
    try {
      const addresses = {
        triton: triton.url,
        ...(httpPort === undefined ? {} : { tritonHttp: triton.httpUrl }),
        ...(openai ? { openai: openai.url } : {}),
        ...(anthropic ? { anthropic: anthropic.url } : {}),
      };
      if (values.json) io.stdout(`${toJson(addresses, 0)}\n`);
      else {
        io.stdout(`triton     grpc://${addresses.triton}\n`);
        if (httpPort !== undefined) io.stdout(`triton     ${triton.httpUrl}\n`);
        if (openai) io.stdout(`openai     ${openai.url}\n`);
        if (anthropic) io.stdout(`anthropic  ${anthropic.url}\n`);
        io.stdout('serving; Ctrl-C stops\n');
      }
      if (!signal.aborted)
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      if (!values.json) io.stdout('stopping\n');
    } finally {
      await Promise.allSettled([triton.stop(), ...fakes.map((fake) => fake.close())]);
    }
    return 0;
  });
}
