// The checks over HTTP (`@infergate/core/http`): `<runtime> http-program.ts <http://host:port>`.
// Prints one line `RESULT <json>` and exits 0 when every check passed.
import { argv, exit, stdout } from 'node:process';
import { createHttpClient } from '@infergate/core/http';
import { runChecks } from './checks.js';

// `<url> [--triton]`: --triton names the real Triton's identity_<datatype> models (test/interop).
const triton = argv.includes('--triton');
const url = argv.filter((arg) => !arg.startsWith('--')).at(-1) as string;
const client = createHttpClient({ url, timeoutMs: 10_000 });
const report = await runChecks(
  {
    infer: (model, inputs) => client.infer(model, inputs),
    async *generateStream(prompt) {
      for await (const event of client.generateStream('generate', { text_input: prompt, stream: true })) {
        yield String(event.text_output);
      }
    },
  },
  { triton },
);
await client.close();
// Exit once the line is written (a piped stdout is asynchronous in Node).
stdout.write(`RESULT ${JSON.stringify(report)}\n`, () => exit(report.ok ? 0 : 1));
