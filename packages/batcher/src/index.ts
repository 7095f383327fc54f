// @infergate/batcher: see README.md. Public exports are listed here explicitly.
export type { CloseOptions } from './micro-batcher.js';
export { createMicroBatcher, MicroBatcher } from './micro-batcher.js';
export type {
  GetModelConfig,
  GetModelStatistics,
  MicroBatcherOptions,
  ModelBatchingConfig,
  ModelConfigSource,
  ModelQueueStatistics,
  ResolvedMicroBatcherOptions,
} from './options.js';
export { microBatcherOptionsSchema, resolveMicroBatcherOptions } from './options.js';
export type { LaneStats, MicroBatcherStats } from './stats.js';
