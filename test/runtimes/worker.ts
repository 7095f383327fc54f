// The checks in Cloudflare's workerd: a Worker that runs them over HTTP against `?target=<url>`
// (the reference server on 127.0.0.1) and answers with the report. Bundled with esbuild from
// `@infergate/core/http` only: no node: module, no grpc-js, no Buffer.
import { createHttpClient } from '@infergate/core/http';
import { runChecks } from './checks.js';

export default {
  async fetch(request: Request): Promise<Response> {
    const target = new URL(request.url).searchParams.get('target');
    if (target === null) return new Response('missing ?target=<url>', { status: 400 });
    const client = createHttpClient({ url: target, timeoutMs: 10_000 });
    try {
      const report = await runChecks({
        infer: (model, inputs) => client.infer(model, inputs),
        async *generateStream(prompt) {
          for await (const event of client.generateStream('generate', { text_input: prompt, stream: true })) {
            yield String(event.text_output);
          }
        },
      });
      return new Response(
        JSON.stringify({
          ...report,
          hasBuffer: typeof (globalThis as { Buffer?: unknown }).Buffer !== 'undefined',
        }),
        {
          headers: { 'content-type': 'application/json' },
        },
      );
    } finally {
      await client.close();
    }
  },
};
