// The checks over HTTP (`@infergate/core/http`): `<runtime> http-program.ts <http://host:port>`.
// Prints one line `RESULT <json>` and exits 0 when every check passed.
import { argv, exit, stdout } from 'node:process';
import { createHttpClient } from '@infergate/core/http';
import { runChecks } from './checks.js';

const url = argv[argv.length - 1] as string;
const client = createHttpClient({ url, timeoutMs: 10_000 });
const report = await runChecks({
  infer: (model, inputs) => client.infer(model, inputs),
  async *generateStream(prompt) {
    for await (const event of client.generateStream('generate', { text_input: prompt, stream: true })) {
      yield String(event.text_output);
    }
  },
});
await client.close();
// Exit once the line is written (a piped stdout is asynchronous in Node).
stdout.write(`RESULT ${JSON.stringify(report)}\n`, () => exit(report.ok ? 0 : 1));
