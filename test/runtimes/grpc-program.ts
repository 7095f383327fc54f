// The checks over gRPC (`@infergate/core`, grpc-js on node:http2): `<runtime> grpc-program.ts <host:port>`.
// Prints one line `RESULT <json>` and exits 0 when every check passed.
import { argv, exit, stdout } from 'node:process';
import { createTritonClient } from '@infergate/core';
import { runChecks } from './checks.js';

// `<url> [--triton]`: --triton names the real Triton's identity_<datatype> models (test/interop).
const triton = argv.includes('--triton');
const url = argv.filter((arg) => !arg.startsWith('--')).at(-1) as string;
const client = createTritonClient({ url, timeoutMs: 10_000, enableGpuIpc: false });
const report = await runChecks(
  {
    infer: (model, inputs) => client.infer(model, inputs),
    async *generateStream(prompt) {
      const inputs = [
        { name: 'text_input', datatype: 'BYTES' as const, data: [prompt] },
        { name: 'stream', datatype: 'BOOL' as const, data: [true] },
      ];
      for await (const result of client.inferStream('generate', inputs, { outputs: ['text_output'] })) {
        yield result.output('text_output').strings()[0] as string;
      }
    },
  },
  { triton },
);
await client.close();
// Exit once the line is written (a piped stdout is asynchronous in Node).
stdout.write(`RESULT ${JSON.stringify(report)}\n`, () => exit(report.ok ? 0 : 1));
