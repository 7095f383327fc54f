import type * as Zod from 'zod';
import type { z } from 'zod';
import { loadZod } from './internal/lazy-modules.js';
import { DEFAULT_SERVICE_NAME, parseOptions } from './options.js';

/**
 * The service contract from the original brief: one schema, one place for the seed defaults that
 * the batcher, shared-memory path and telemetry read.
 */
function buildConfigSchema(z: typeof Zod.z) {
  return z
    .object({
      /** @default "model-serving-triton-inference-server" */
      serviceName: z.string().min(1).default(DEFAULT_SERVICE_NAME),
      /** Largest batch the client-side batcher sends. @default 64 */
      maxBatchSize: z.number().int().positive().default(64),
      /** Longest an item waits in the client-side batcher's queue. @default 10 */
      maxQueueDelayMs: z.number().nonnegative().default(10),
      /** Send large tensors through shared memory when the server is on this host. @default true */
      enableGpuIpc: z.boolean().default(true),
    })
    .strict();
}

type ConfigSchema = ReturnType<typeof buildConfigSchema>;
let configSchema: ConfigSchema | undefined;

/** The zod schema of the service contract (zod loads on first use). */
export function infergateConfigSchema(): ConfigSchema {
  configSchema ??= buildConfigSchema(loadZod());
  return configSchema;
}

export type InfergateConfig = z.output<ConfigSchema>;

export function resolveConfig(input: z.input<ConfigSchema> = {}): InfergateConfig {
  return parseOptions(infergateConfigSchema(), input, 'infergate config');
}
