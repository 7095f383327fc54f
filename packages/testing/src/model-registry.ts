import { type ModelDefinition, type ResolvedModel, resolveModel } from './model-definition.js';
import { notFound } from './rpc-error.js';

export interface ResolvedVersion {
  model: ResolvedModel;
  version: string;
}

function latest(versions: readonly string[]): string {
  // Triton's default version policy serves the highest numbered version.
  let best = versions[0] as string;
  for (const version of versions) if (Number(version) > Number(best)) best = version;
  return best;
}

/** The models a server serves, by name; replacing a name swaps the model in place. */
export class ModelRegistry {
  readonly #models = new Map<string, ResolvedModel>();

  add(definition: ModelDefinition): ResolvedModel {
    const model = resolveModel(definition);
    this.#models.set(model.name, model);
    return model;
  }

  remove(name: string): boolean {
    return this.#models.delete(name);
  }

  names(): string[] {
    return [...this.#models.keys()];
  }

  /** The model and version a request names; undefined when either is unknown. */
  find(name: string, version = ''): ResolvedVersion | undefined {
    const model = this.#models.get(name);
    if (model === undefined) return undefined;
    if (version === '') return { model, version: latest(model.versions) };
    return model.versions.includes(version) ? { model, version } : undefined;
  }

  /** Like `find`, but answers NOT_FOUND with Triton's wording. */
  resolve(name: string, version = ''): ResolvedVersion {
    const found = this.find(name, version);
    if (found !== undefined) return found;
    if (version === '' || !this.#models.has(name))
      throw notFound(`Request for unknown model: '${name}' is not found`);
    throw notFound(`Request for unknown model: '${name}' version ${version} is not found`);
  }
}
