// `npm run demo`: a multi-tenant workload through batcher, router and cost accounting, with LLM chat
// fallback, an injected failure midway, a summary table and an HTML report (reports/demo-*.html).
// Runs on the embedded reference servers and fake LLM providers, or against a real Triton (--url).
// The pieces live in scripts/demo/.
import { InfergateError } from '@infergate/core';
import { parseArgs, USAGE, UsageError } from './demo/args.js';
import { runDemo } from './demo/run.js';

let args: ReturnType<typeof parseArgs>;
try {
  args = parseArgs(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof UsageError)) throw error;
  process.stderr.write(`infergate demo: ${error.message}\n\n${USAGE}`);
  process.exit(2);
}
if (args.help) {
  process.stdout.write(USAGE);
  process.exit(0);
}

try {
  await runDemo(args);
  // Everything is closed; should a stray handle remain, it must not keep the demo from ending.
  setTimeout(() => process.exit(0), 2_000).unref();
} catch (error) {
  // A typed error (Triton unreachable, unknown model, …) in one line; anything else with its stack.
  const detail =
    error instanceof InfergateError
      ? `${error.code}: ${error.message}${args.url === undefined ? '' : ` (Triton at ${args.url})`}`
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  process.stderr.write(`\ninfergate demo failed: ${detail}\n`);
  process.exit(1);
}
