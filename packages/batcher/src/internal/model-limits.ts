import type { GetModelConfig, ModelBatchingConfig, ModelConfigSource } from '../options.js';
import type { ServerBatching } from './fill-planner.js';

/** A model's `max_batch_size`; `undefined` when it cannot be known (the batcher's own cap applies). */
export type ModelLimit = number | undefined;

/** The server's dynamic batcher from a model config, in either of the shapes it may come in. */
export function serverBatchingOf(config: ModelBatchingConfig): ServerBatching | undefined {
  let source:
    | {
        maxQueueDelayUs?: unknown;
        maxQueueDelayMicroseconds?: unknown;
        preferredBatchSizes?: unknown;
        preferredBatchSize?: unknown;
      }
    | undefined;
  if (config.dynamicBatching !== undefined) source = config.dynamicBatching;
  else if (config.schedulingChoice?.case === 'dynamicBatching') {
    const value = config.schedulingChoice.value;
    source = typeof value === 'object' && value !== null ? (value as typeof source) : {};
  }
  if (source === undefined) return undefined;
  const delay = Number(source.maxQueueDelayUs ?? source.maxQueueDelayMicroseconds ?? 0);
  const sizes = source.preferredBatchSizes ?? source.preferredBatchSize;
  const preferred = Array.isArray(sizes)
    ? sizes
        .map(Number)
        .filter((size) => Number.isInteger(size) && size > 0)
        .sort((a, b) => a - b)
    : [];
  return {
    maxQueueDelayUs: Number.isFinite(delay) && delay >= 0 ? delay : 0,
    preferredBatchSizes: preferred,
  };
}

/**
 * `max_batch_size` per model and version: from the explicit `models` option, else read once through
 * `getModelConfig` (or a client's `modelConfig()`) and cached. A failed lookup is not cached: the
 * call goes through unbatched and the next call asks again.
 */
export class ModelLimits {
  /**
   * The `models` option's own entries: a Map, so that a model named like a member of every object
   * (`constructor`, `toString`, `__proto__`) finds no explicit limit in Object.prototype's member
   * (which read as "no limit known" and skipped the model's own max_batch_size).
   */
  readonly #explicit: ReadonlyMap<string, number>;
  readonly #lookup: GetModelConfig | undefined;
  /** Limits read so far, by model then version (no key string built per call). */
  readonly #known = new Map<string, Map<string, ModelLimit>>();
  readonly #server = new Map<string, ServerBatching>();
  readonly #pending = new Map<string, Promise<ModelLimit | null>>();

  constructor(
    explicit: Readonly<Record<string, { maxBatchSize: number }>>,
    getModelConfig: GetModelConfig | undefined,
    client: ModelConfigSource | undefined,
  ) {
    this.#explicit = new Map(Object.entries(explicit).map(([model, limits]) => [model, limits.maxBatchSize]));
    this.#lookup =
      getModelConfig ??
      (client === undefined
        ? undefined
        : (model, version) => client.modelConfig(model, version === '' ? {} : { version }));
  }

  /** The cached limit; `null` when it still has to be looked up. */
  peek(model: string, version: string): ModelLimit | null {
    const explicit = this.#explicit.get(model);
    if (explicit !== undefined) return explicit;
    if (this.#lookup === undefined) return undefined;
    const versions = this.#known.get(model);
    if (versions === undefined) return null;
    const limit = versions.get(version);
    return limit !== undefined || versions.has(version) ? limit : null;
  }

  /** The server's dynamic batcher for a model whose config was read; `undefined` when it has none. */
  serverBatching(model: string, version: string): ServerBatching | undefined {
    return this.#server.get(`${model}\u0000${version}`);
  }

  /** Looks the limit up (one request per model at a time). `null`: the lookup failed. */
  resolve(model: string, version: string): Promise<ModelLimit | null> {
    const key = `${model}\u0000${version}`;
    let pending = this.#pending.get(key);
    if (pending === undefined) {
      const lookup = this.#lookup as GetModelConfig;
      pending = lookup(model, version).then(
        (config) => {
          const limit = Number(config.maxBatchSize);
          const known = Number.isInteger(limit) && limit >= 0 ? limit : undefined;
          let versions = this.#known.get(model);
          if (versions === undefined) {
            versions = new Map();
            this.#known.set(model, versions);
          }
          versions.set(version, known);
          const server = serverBatchingOf(config);
          if (server !== undefined) this.#server.set(key, server);
          this.#pending.delete(key);
          return known;
        },
        () => {
          this.#pending.delete(key);
          return null;
        },
      );
      this.#pending.set(key, pending);
    }
    return pending;
  }
}
