import { ErrorCode, InfergateError } from '@infergate/core';

/** What `create` receives on a cold start. */
export interface LazyGatewayContext<S> {
  /**
   * The saved router state (`router.toJSON()` of an earlier instance), for `createRouter({ initialState })`.
   * Undefined when none was found, when it could not be read, or on the retry after `create` rejected it.
   */
  routerState: S | undefined;
}

export interface LazyGatewayOptions<G, S extends object = Record<string, unknown>> {
  /** Builds the gateway. Called once per process; again only after it failed or after `close()`. */
  create: (context: LazyGatewayContext<S>) => G | Promise<G>;
  /** An environment variable holding a saved router state as JSON. @default none */
  routerStateEnv?: string;
  /**
   * Loads a saved router state (a JSON string or the parsed object) from wherever `saveRouterState`
   * puts it: DynamoDB, S3, Redis, a file. Consulted before `routerStateEnv`. @default none
   */
  loadRouterState?: () => S | string | undefined | Promise<S | string | undefined>;
  /** Reads the state to save from the gateway, typically `(gateway) => gateway.router.toJSON()`. */
  exportRouterState?: (gateway: G) => S;
  /** Stores the state; called by `persist()` when the state changed since it was loaded or last saved. */
  saveRouterState?: (state: S) => void | Promise<void>;
  /** A saved state that could not be read, or that `create` rejected; the cold start goes on without it. */
  onRouterStateError?: (error: InfergateError) => void;
  /**
   * Runs at the end of every wrapped invocation, before the handler returns. Our own stack keeps
   * nothing alive (examples/serverless-handler/README.md); use it for what your factory adds that does
   * (an ioredis connection to quit, an OpenTelemetry exporter to flush).
   */
  idle?: (gateway: G) => void | Promise<void>;
  /** Releases the gateway on `close()` (router/client `close()`). */
  close?: (gateway: G) => void | Promise<void>;
}

/** A gateway built on first use and reused by every later (warm) invocation of the process. */
export interface LazyGateway<G> {
  /** The gateway; the first call builds it, concurrent first calls share one build. */
  get(): Promise<G>;
  /** The gateway when built, else undefined (no build). */
  readonly current: G | undefined;
  /** How many times `create` was called (a rejected saved state adds one retry). */
  readonly builds: number;
  /** The gateway, and whether this call is the one that built it (a cold start). */
  acquire(): Promise<{ gateway: G; coldStart: boolean }>;
  /** Saves the router state when it changed (or always with `force`). No-op without `saveRouterState`. */
  persist(options?: { force?: boolean }): Promise<void>;
  /**
   * End of an invocation: `persist()` (a failure goes to `onRouterStateError`), then the `idle` hook.
   * The handler wrappers call it before they return.
   */
  idle(): Promise<void>;
  /** Closes the gateway; the next `get()` builds a new one. */
  close(): Promise<void>;
}

function stateError(message: string, cause: unknown): InfergateError {
  return new InfergateError(ErrorCode.InvalidArgument, message, { cause });
}

/**
 * Builds the gateway once per process and hands the same instance to every warm invocation
 * (Lambda, Cloud Functions, Vercel, Workers on Node). On a cold start a saved router state
 * (breakers that were open stay open) is read from `loadRouterState` or `routerStateEnv`; a state
 * that cannot be read or that `create` rejects never stops the cold start: `create` runs again
 * without it.
 */
export function createLazyGateway<G, S extends object = Record<string, unknown>>(
  factoryOrOptions: LazyGatewayOptions<G, S> | LazyGatewayOptions<G, S>['create'],
): LazyGateway<G> {
  const options: LazyGatewayOptions<G, S> =
    typeof factoryOrOptions === 'function' ? { create: factoryOrOptions } : factoryOrOptions;
  let building: Promise<G> | undefined;
  let current: G | undefined;
  let builds = 0;
  let lastSaved: string | undefined;

  const report = (error: InfergateError) => options.onRouterStateError?.(error);

  async function loadState(): Promise<S | undefined> {
    let raw: S | string | undefined;
    try {
      raw = await options.loadRouterState?.();
      if (raw === undefined && options.routerStateEnv !== undefined)
        raw = process.env[options.routerStateEnv];
    } catch (error) {
      report(stateError('loading the saved router state failed', error));
      return undefined;
    }
    if (raw === undefined || raw === '') return undefined;
    try {
      const parsed: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
      if (typeof parsed !== 'object' || parsed === null) throw new TypeError('not a JSON object');
      lastSaved = JSON.stringify(parsed);
      return parsed as S;
    } catch (error) {
      report(stateError('the saved router state is not a JSON object', error));
      return undefined;
    }
  }

  async function build(): Promise<G> {
    const routerState = await loadState();
    builds += 1;
    try {
      return await options.create({ routerState });
    } catch (error) {
      if (routerState === undefined) throw error;
      // A stale or corrupt state must not turn every cold start into a failure.
      report(stateError('the gateway rejected the saved router state; started without it', error));
      lastSaved = undefined;
      builds += 1;
      return options.create({ routerState: undefined });
    }
  }

  async function persist({ force = false }: { force?: boolean } = {}): Promise<void> {
    if (current === undefined || options.saveRouterState === undefined) return;
    if (options.exportRouterState === undefined) return;
    const state = options.exportRouterState(current);
    const text = JSON.stringify(state);
    if (!force && text === lastSaved) return;
    await options.saveRouterState(state);
    lastSaved = text;
  }

  function acquire(): { pending: Promise<G>; coldStart: boolean } {
    if (building !== undefined) return { pending: building, coldStart: false };
    const pending = build();
    building = pending;
    pending.then(
      (gateway) => {
        if (building === pending) current = gateway;
      },
      () => {
        if (building === pending) building = undefined; // the next invocation tries again
      },
    );
    return { pending, coldStart: true };
  }

  return {
    get: () => acquire().pending,
    async acquire() {
      const { pending, coldStart } = acquire();
      return { gateway: await pending, coldStart };
    },
    get current() {
      return current;
    },
    get builds() {
      return builds;
    },
    persist,
    async idle() {
      if (current === undefined) return;
      await persist().catch((error: unknown) =>
        report(new InfergateError(ErrorCode.Unavailable, 'saving the router state failed', { cause: error })),
      );
      await options.idle?.(current);
    },
    async close() {
      const gateway = current ?? (building === undefined ? undefined : await building.catch(() => undefined));
      building = undefined;
      current = undefined;
      if (gateway !== undefined) await options.close?.(gateway);
    },
  };
}
