import { z } from 'zod';
import { DEFAULT_SERVICE_NAME, parseOptions } from './options.js';

/**
 * The service contract from the original brief: one schema, one place for the seed defaults that
 * the batcher, shared-memory path and telemetry read.
 */
export const infergateConfigSchema = z
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

export type InfergateConfig = z.output<typeof infergateConfigSchema>;

export function resolveConfig(input: z.input<typeof infergateConfigSchema> = {}): InfergateConfig {
  return parseOptions(infergateConfigSchema, input, 'infergate config');
}
