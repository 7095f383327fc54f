import type { GetModelConfig, ModelConfigSource } from '../options.js';

/** A model's `max_batch_size`; `undefined` when it cannot be known (the batcher's own cap applies). */
export type ModelLimit = number | undefined;

/**
 * `max_batch_size` per model and version: from the explicit `models` option, else read once through
 * `getModelConfig` (or a client's `modelConfig()`) and cached. A failed lookup is not cached: the
 * call goes through unbatched and the next call asks again.
 */
export class ModelLimits {
  readonly #explicit: Readonly<Record<string, { maxBatchSize: number }>>;
  readonly #lookup: GetModelConfig | undefined;
  readonly #known = new Map<string, ModelLimit>();
  readonly #pending = new Map<string, Promise<ModelLimit | null>>();

  constructor(
    explicit: Readonly<Record<string, { maxBatchSize: number }>>,
    getModelConfig: GetModelConfig | undefined,
    client: ModelConfigSource | undefined,
  ) {
    this.#explicit = explicit;
    this.#lookup =
      getModelConfig ??
      (client === undefined
        ? undefined
        : (model, version) => client.modelConfig(model, version === '' ? {} : { version }));
  }

  /** The cached limit; `null` when it still has to be looked up. */
  peek(model: string, version: string): ModelLimit | null {
    const explicit = this.#explicit[model];
    if (explicit !== undefined) return explicit.maxBatchSize;
    if (this.#lookup === undefined) return undefined;
    const key = `${model}\u0000${version}`;
    return this.#known.has(key) ? this.#known.get(key) : null;
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
          this.#known.set(key, known);
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
