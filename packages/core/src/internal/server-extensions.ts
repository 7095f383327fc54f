import type { CallOptions } from '../transport.js';

/**
 * A server's protocol extensions (ServerMetadata.extensions), fetched once and shared by every
 * caller; a failed fetch is forgotten, so the next call asks again. Both clients (gRPC and HTTP)
 * keep one.
 */
export class ServerExtensions {
  readonly #fetch: (options: CallOptions) => Promise<{ readonly extensions: readonly string[] }>;
  #metadata: Promise<{ readonly extensions: readonly string[] }> | undefined;

  constructor(fetch: (options: CallOptions) => Promise<{ readonly extensions: readonly string[] }>) {
    this.#fetch = fetch;
  }

  /** The extensions, from the cache unless `refresh`. */
  async get(options: { refresh?: boolean } & CallOptions = {}): Promise<ReadonlySet<string>> {
    if (options.refresh || this.#metadata === undefined) {
      const metadata = this.#fetch(options);
      this.#metadata = metadata;
      metadata.catch(() => {
        if (this.#metadata === metadata) this.#metadata = undefined;
      });
    }
    return new Set((await this.#metadata).extensions);
  }
}
