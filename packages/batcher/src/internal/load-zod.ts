import { createRequire } from 'node:module';
import type * as Zod from 'zod';

// zod is loaded on first use, not at import: valid options are read by hand
// (accept-micro-batcher-options.ts), so only options it refuses, or `microBatcherOptionsSchema()`,
// load it. Resolved from this package, whose dependency it is (core's loader would resolve core's
// copy). zod publishes CommonJS, so a synchronous require is enough. Decision 0025.
const requireFromHere = createRequire(import.meta.url);
let zod: typeof Zod.z | undefined;

export function loadZod(): typeof Zod.z {
  zod ??= (requireFromHere('zod') as typeof Zod).z;
  return zod;
}
