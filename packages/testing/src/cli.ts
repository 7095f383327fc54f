#!/usr/bin/env node
import { parseArgs } from 'node:util';
import { startTestServer } from './test-server.js';

const usage = `Usage: infergate-test-server [--port 8001] [--host 127.0.0.1]

Serves the infergate test models (identity, add_sub, simulated_gpu, fail, repeat,
accumulate) over
Triton's gRPC protocol until SIGINT or SIGTERM.`;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      port: { type: 'string', short: 'p', default: '8001' },
      host: { type: 'string', default: '127.0.0.1' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    console.log(usage);
    return;
  }
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`--port must be an integer from 0 to 65535, got '${values.port}'`);
  }
  const server = await startTestServer({ host: values.host, port });
  console.log(`infergate test server listening on ${server.url}`);
  const shutdown = (signal: NodeJS.Signals) => {
    console.log(`${signal}: stopping`);
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  console.error(usage);
  process.exit(1);
});
