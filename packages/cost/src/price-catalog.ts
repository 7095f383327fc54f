import { ANTHROPIC_PRICES } from './price-data-anthropic.js';
import { OPENAI_PRICES } from './price-data-openai.js';
import { effectiveFromMs, type PriceEntry, parsePriceList } from './price-schema.js';

/** What a lookup knows about the call. */
export interface PriceQuery {
  model: string;
  /** When given, entries of another provider do not match. */
  provider?: string;
  /** The call's time (ms since epoch); picks the entry in force. */
  at: number;
}

/**
 * A user hook consulted before the catalog: return an entry to price the model, or undefined to
 * fall through to registered and built-in prices.
 */
export type PriceResolver = (query: PriceQuery) => PriceEntry | undefined;

// A dated snapshot ("gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929", "…@20240620", "…-latest")
// prices as its base model. Explicit, so "gpt-4o-mini" never falls back to "gpt-4o".
const SNAPSHOT_SUFFIX = /(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-latest)$/;

/** Names a model is looked up by, most specific first: as given, without "provider/", without a snapshot suffix. */
export function candidateNames(model: string): string[] {
  const names = [model];
  const slash = model.lastIndexOf('/');
  const bare = slash === -1 ? model : model.slice(slash + 1);
  if (bare !== model) names.push(bare);
  const base = bare.replace(SNAPSHOT_SUFFIX, '');
  if (base !== bare && base !== '') names.push(base);
  return names;
}

interface Indexed {
  entry: PriceEntry;
  fromMs: number;
}

/**
 * The price list: built-in OpenAI and Anthropic entries, entries added with `register()` (which win
 * over built-in ones of the same name), and an optional resolver consulted first.
 */
export class PriceCatalog {
  readonly #builtIn = new Map<string, Indexed[]>();
  readonly #registered = new Map<string, Indexed[]>();
  #resolver: PriceResolver | undefined;

  constructor(options: { builtIn?: boolean; prices?: readonly PriceEntry[]; resolver?: PriceResolver } = {}) {
    if (options.builtIn !== false)
      PriceCatalog.#index(this.#builtIn, [...OPENAI_PRICES, ...ANTHROPIC_PRICES]);
    if (options.prices) this.register(options.prices);
    this.#resolver = options.resolver;
  }

  /** Adds or overrides entries (validated). A model registered here hides its built-in entries. */
  register(entries: readonly PriceEntry[]): void {
    PriceCatalog.#index(this.#registered, parsePriceList(entries));
  }

  set resolver(resolver: PriceResolver | undefined) {
    this.#resolver = resolver;
  }

  /** The entry in force for the model at `query.at`, or undefined when the model is not priced. */
  lookup(query: PriceQuery): PriceEntry | undefined {
    const resolved = this.#resolver?.(query);
    if (resolved) return resolved;
    for (const name of candidateNames(query.model)) {
      const found =
        PriceCatalog.#pick(this.#registered.get(name), query) ??
        PriceCatalog.#pick(this.#builtIn.get(name), query);
      if (found) return found;
    }
    return undefined;
  }

  /** Every entry (registered first), e.g. to publish the catalog. */
  entries(): PriceEntry[] {
    const seen = new Set<PriceEntry>();
    for (const list of [...this.#registered.values(), ...this.#builtIn.values()])
      for (const item of list) seen.add(item.entry);
    return [...seen];
  }

  static #index(target: Map<string, Indexed[]>, entries: readonly PriceEntry[]): void {
    for (const entry of entries) {
      const item = { entry, fromMs: effectiveFromMs(entry) };
      for (const name of [entry.model, ...(entry.aliases ?? [])]) {
        const list = (target.get(name) ?? []).filter(
          (existing) => !(existing.fromMs === item.fromMs && existing.entry.provider === entry.provider),
        );
        list.push(item);
        list.sort((a, b) => b.fromMs - a.fromMs); // newest first
        target.set(name, list);
      }
    }
  }

  static #pick(list: readonly Indexed[] | undefined, query: PriceQuery): PriceEntry | undefined {
    if (!list) return undefined;
    for (const item of list) {
      if (item.fromMs > query.at) continue;
      if (query.provider !== undefined && item.entry.provider !== query.provider) continue;
      return item.entry;
    }
    return undefined;
  }
}
