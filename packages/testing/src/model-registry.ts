import { status } from './internal/grpc-status.js';
import type { ModelConfigInit } from './model-definition.js';
import { type ModelDefinition, type ResolvedModel, resolveModel } from './model-definition.js';
import { notFound, RpcError } from './rpc-error.js';

export interface ResolvedVersion {
  model: ResolvedModel;
  version: string;
}

/** One RepositoryModelLoad as the server received it. */
export interface LoadRecord {
  time: number;
  /** The parsed `config` parameter (JSON model config override), if one was sent. */
  config?: Record<string, unknown>;
  /** The `file:<path>` parameters, by path (without the `file:` prefix). */
  files: Record<string, Uint8Array>;
}

/** One RepositoryIndex entry. */
export interface IndexEntry {
  name: string;
  version: string;
  state: 'READY' | 'UNAVAILABLE';
  reason: string;
}

interface Entry {
  definition: ModelDefinition;
  model: ResolvedModel;
  loaded: boolean;
  reason: string;
  loads: LoadRecord[];
}

function latest(versions: readonly string[]): string {
  // Triton's default version policy serves the highest numbered version.
  let best = versions[0] as string;
  for (const version of versions) if (Number(version) > Number(best)) best = version;
  return best;
}

/** Applies what a JSON config override sets that this server models: max_batch_size, parameters. */
function override(definition: ModelDefinition, config: Record<string, unknown>): ModelDefinition {
  const next: ModelDefinition = { ...definition };
  if (typeof config.max_batch_size === 'number') next.maxBatchSize = config.max_batch_size;
  const parameters = config.parameters;
  if (typeof parameters === 'object' && parameters !== null) {
    const merged: NonNullable<ModelConfigInit['parameters']> = { ...definition.config?.parameters };
    for (const [key, value] of Object.entries(parameters as Record<string, unknown>)) {
      const text = (value as { string_value?: unknown } | null)?.string_value;
      merged[key] = { stringValue: typeof text === 'string' ? text : String(value) };
    }
    next.config = { ...definition.config, parameters: merged };
  }
  return next;
}

/**
 * The model repository: every model the server knows, loaded (served) or not. Unloaded models keep
 * their definition, so RepositoryModelLoad can serve them again.
 */
export class ModelRegistry {
  readonly #entries = new Map<string, Entry>();

  /** Registers and loads a model, replacing one of the same name. */
  add(definition: ModelDefinition): ResolvedModel {
    const model = resolveModel(definition);
    const loads = this.#entries.get(model.name)?.loads ?? [];
    this.#entries.set(model.name, { definition, model, loaded: true, reason: '', loads });
    return model;
  }

  /** Forgets a model entirely (it leaves the repository index too). */
  remove(name: string): boolean {
    return this.#entries.delete(name);
  }

  /** Names of the loaded models. */
  names(): string[] {
    return [...this.#entries.values()].filter((entry) => entry.loaded).map((entry) => entry.model.name);
  }

  isLoaded(name: string): boolean {
    return this.#entries.get(name)?.loaded === true;
  }

  /** The model and version a request names; undefined when unknown or unloaded. */
  find(name: string, version = ''): ResolvedVersion | undefined {
    const entry = this.#entries.get(name);
    if (entry === undefined || !entry.loaded) return undefined;
    const { model } = entry;
    if (version === '') return { model, version: latest(model.versions) };
    return model.versions.includes(version) ? { model, version } : undefined;
  }

  /** Like `find`, but answers NOT_FOUND with Triton's wording. */
  resolve(name: string, version = ''): ResolvedVersion {
    const found = this.find(name, version);
    if (found !== undefined) return found;
    const entry = this.#entries.get(name);
    if (entry === undefined) throw notFound(`Request for unknown model: '${name}' is not found`);
    if (!entry.loaded) throw notFound(`Request for unknown model: '${name}' has no available versions`);
    throw notFound(`Request for unknown model: '${name}' version ${version} is not found`);
  }

  /** RepositoryIndex: one entry per version of each known model (only loaded ones when `readyOnly`). */
  index(readyOnly = false): IndexEntry[] {
    const out: IndexEntry[] = [];
    for (const entry of this.#entries.values()) {
      if (readyOnly && !entry.loaded) continue;
      for (const version of entry.model.versions) {
        out.push({
          name: entry.model.name,
          version,
          state: entry.loaded ? 'READY' : 'UNAVAILABLE',
          reason: entry.reason,
        });
      }
    }
    return out;
  }

  /** RepositoryModelLoad: (re)loads a known model, applying a config override if given. */
  load(name: string, record: LoadRecord): void {
    const entry = this.#entries.get(name);
    if (entry === undefined) {
      throw new RpcError(status.INTERNAL, `failed to load '${name}', failed to poll from model repository`);
    }
    const definition = record.config ? override(entry.definition, record.config) : entry.definition;
    try {
      entry.model = resolveModel(definition);
    } catch (error) {
      throw new RpcError(status.INVALID_ARGUMENT, `failed to load '${name}': ${(error as Error).message}`);
    }
    entry.loaded = true;
    entry.reason = '';
    entry.loads.push(record);
  }

  /** RepositoryModelUnload; with `dependents`, also the models it composes (ensemble steps). */
  unload(name: string, dependents = false): void {
    const entry = this.#entries.get(name);
    if (entry === undefined) {
      throw new RpcError(status.INVALID_ARGUMENT, `failed to unload '${name}', no version is available`);
    }
    entry.loaded = false;
    entry.reason = 'unloaded';
    if (!dependents) return;
    for (const composing of entry.model.composingModels ?? []) {
      const child = this.#entries.get(composing);
      if (child?.loaded) this.unload(composing, true);
    }
  }

  /** The RepositoryModelLoad calls a model received, oldest first. */
  loads(name: string): LoadRecord[] {
    return [...(this.#entries.get(name)?.loads ?? [])];
  }
}
