/**
 * Typed keys for `CallOptions.context`. A key is a registered symbol (`Symbol.for(name)`), so two
 * copies of a package (ESM and CJS, or two versions) that create a key with the same name agree on
 * it, and a plain `new Map([[key, value]])` still works; the type parameter says what value the
 * key holds, so reading it needs no cast at the call site.
 */

declare const valueType: unique symbol;

/** A context key whose value is a `T`. */
export type ContextKey<T> = symbol & { readonly [valueType]?: T };

/** The map type of `CallOptions.context`. */
export type CallContext = ReadonlyMap<string | symbol, unknown>;

/**
 * Creates (or finds) the key registered under `name`. Names are global: prefix them with the
 * owning package (`'@acme/auth.user'`).
 */
export function createContextKey<T>(name: string): ContextKey<T> {
  return Symbol.for(name) as ContextKey<T>;
}

/** The value under `key`, typed; undefined when the context or the key is absent. */
export function getContextValue<T>(context: CallContext | undefined, key: ContextKey<T>): T | undefined {
  return context?.get(key) as T | undefined;
}

/** A copy of `context` (or a new map) with `key` set to `value`; the caller's map is never changed. */
export function withContextValue<T>(
  context: CallContext | undefined,
  key: ContextKey<T>,
  value: T,
): Map<string | symbol, unknown> {
  const next = new Map(context);
  next.set(key, value);
  return next;
}
