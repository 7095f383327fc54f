import type { IndexEntry, LoadRecord } from './model-registry.js';

export interface TestServerTls {
  /** PEM server private key and certificate chain. */
  key: string | Buffer;
  cert: string | Buffer;
  /** PEM CA that client certificates must chain to (needed for `requireClientCert`). */
  ca?: string | Buffer;
  /** @default false */
  requireClientCert?: boolean;
}

/** Test helpers over the model repository. */
export interface RepositoryView {
  /** What RepositoryIndex reports. */
  index(readyOnly?: boolean): IndexEntry[];
  isLoaded(model: string): boolean;
  /** As RepositoryModelLoad with an optional JSON config override. */
  load(model: string, config?: Record<string, unknown>): void;
  unload(model: string, unloadDependents?: boolean): void;
  /** The RepositoryModelLoad calls the model received (config overrides, `file:` contents). */
  loads(model: string): LoadRecord[];
}
