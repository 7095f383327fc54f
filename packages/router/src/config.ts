import {
  type ConnectivitySource,
  type InferRequest,
  type InferTransport,
  isConnectivitySource,
} from '@infergate/core';
import type { ChatModel, ChatRequest } from '@infergate/llm';
import type * as Zod from 'zod';
import type { z } from 'zod';
import { admissionSchema } from './admission.js';
import { BALANCE_STRATEGIES, type BalanceStrategy } from './balance-strategy.js';
import type { ProbeFunction } from './breaker.js';
import type { BreakerSnapshot } from './breaker-state.js';
import type { PriceSource } from './chat-price.js';
import { hedgeSchema } from './hedger.js';
import { loadZod } from './internal/load-zod.js';
import { savedStatesOf } from './internal/saved-states.js';
import { RateLimitWatch } from './rate-limit-watch.js';
import type { RouteCallOptions } from './route-call-options.js';

/**
 * A route: a target name, an ordered fallback chain, or a weighted group of peers. Routes nest, so
 * a load-balanced group can be one step of a fallback chain.
 */
export type RouteNode =
  | string
  | { readonly fallback: readonly RouteNode[] }
  | {
      readonly group: readonly { readonly route: RouteNode; readonly weight?: number | undefined }[];
      readonly strategy?: BalanceStrategy | undefined;
    };

function routeNames(node: RouteNode, into: string[]): string[] {
  if (typeof node === 'string') into.push(node);
  else if ('fallback' in node) for (const step of node.fallback) routeNames(step, into);
  else for (const member of node.group) routeNames(member.route, into);
  return into;
}

/** Checks target names are unique and every route step names a target. */
export function checkTargets(
  value: { targets: readonly { name: string }[]; route?: RouteNode | undefined },
  context: z.RefinementCtx,
): void {
  const names = new Set<string>();
  value.targets.forEach((target, index) => {
    if (names.has(target.name))
      context.addIssue({
        code: 'custom',
        path: ['targets', index, 'name'],
        message: `duplicate target '${target.name}'`,
      });
    names.add(target.name);
  });
  if (value.route === undefined) return;
  for (const name of routeNames(value.route, [])) {
    if (!names.has(name))
      context.addIssue({ code: 'custom', path: ['route'], message: `unknown target '${name}'` });
  }
}

/**
 * Builds the router's schemas with zod, which loads on first use (internal/load-zod.ts): valid
 * options are read without it (internal/accept-router-options.ts, decision 0025).
 */
function buildRouterSchemas(z: typeof Zod.z) {
  const routeNodeSchema: z.ZodType<RouteNode> = z.lazy(() =>
    z.union([
      z.string().min(1, 'a target name must not be empty'),
      z.object({ fallback: z.array(routeNodeSchema).min(1, 'a fallback chain needs a step') }).strict(),
      z
        .object({
          group: z
            .array(
              z
                .object({
                  route: routeNodeSchema,
                  /** Share of traffic relative to the other peers. @default 1 */
                  weight: z.number().positive().finite().optional(),
                })
                .strict(),
            )
            .min(1, 'a group needs a member'),
          /** How this group picks among its members. @default the router's `balance.strategy` */
          strategy: z.enum(BALANCE_STRATEGIES).optional(),
        })
        .strict(),
    ]),
  );

  const breakerOptionsSchema = z
    .object({
      /** A closed breaker trips when failures exceed this share of calls in the window. @default 50 */
      errorThresholdPercentage: z.number().min(0).max(100).default(50),
      /** Calls needed in the window before it can trip. @default 5 */
      volumeThreshold: z.number().int().nonnegative().default(5),
      /**
       * Gateway failures in a row (UNAVAILABLE: connection refused or reset, GOAWAY, a channel in
       * TRANSIENT_FAILURE; HTTP 502/503/504) that trip a closed breaker at once, whatever the rolling
       * error rate: a dead endpoint leaves rotation on its first few refusals instead of after enough
       * failures to outweigh the successes before them (Envoy's consecutive gateway failures). Any
       * success resets the count; 0 turns it off. @default 3
       */
      consecutiveGatewayFailures: z.number().int().nonnegative().default(3),
      /** Length of the rolling window of call outcomes, in ms. @default 10000 */
      rollingWindowMs: z.number().int().positive().default(10_000),
      /** Buckets the window is made of. @default 10 */
      rollingBuckets: z.number().int().positive().default(10),
      /** Open time after the first trip, in ms. @default 1000 */
      openMs: z.number().positive().default(1_000),
      /** Open time cap, in ms. @default 60000 */
      maxOpenMs: z.number().positive().default(60_000),
      /** Open time grows by this factor per consecutive trip. @default 2 */
      openMultiplier: z.number().min(1).default(2),
      /** Up to this fraction of each open time is taken off at random. @default 0.2 */
      openJitter: z.number().min(0).max(1).default(0.2),
      /** Calls let through at once while half-open. @default 1 */
      halfOpenMaxProbes: z.number().int().positive().default(1),
      /** Successful probes that close the breaker. @default 1 */
      halfOpenSuccesses: z.number().int().positive().default(1),
      /** How often the active probe (if any) runs while open, in ms (also its timeout). @default 1000 */
      probeIntervalMs: z.number().int().positive().default(1_000),
    })
    .strict();

  /**
   * A target's own `breaker`: the same fields and rules without their defaults, so that the fields it
   * names override the router-wide options and the others keep them (`.partial()` would fill every
   * absent field with its default in zod 4 and undo the router-wide options for that target).
   */
  const breakerOverridesSchema = z
    .object(
      Object.fromEntries(
        Object.entries(breakerOptionsSchema.shape).map(([key, field]) => [key, field.unwrap().optional()]),
      ) as {
        [K in keyof typeof breakerOptionsSchema.shape]: z.ZodOptional<
          ReturnType<(typeof breakerOptionsSchema.shape)[K]['unwrap']>
        >;
      },
    )
    .strict();

  const retrySchema = z
    .object({
      /** Extra passes over the route after every candidate failed. @default 2 */
      maxRetries: z.number().int().nonnegative().default(2),
      /** Backoff base: pass n waits uniform [0, min(maxDelayMs, baseDelayMs·2^n)). @default 50 */
      baseDelayMs: z.number().nonnegative().default(50),
      /** Backoff cap; a Retry-After longer than this is not waited for. @default 2000 */
      maxDelayMs: z.number().nonnegative().default(2_000),
      budget: z
        .object({
          /** Retries allowed as a share of requests in the window. @default 0.2 */
          ratio: z.number().min(0).default(0.2),
          /** Retries always allowed per second. @default 10 */
          minPerSecond: z.number().min(0).default(10),
          /** Sliding window, in ms. @default 10000 */
          windowMs: z.number().int().positive().default(10_000),
        })
        .strict()
        .default({ ratio: 0.2, minPerSecond: 10, windowMs: 10_000 }),
    })
    .strict();

  const fn = <T>(what: string) =>
    z.custom<T>((value) => typeof value === 'function', `${what} must be a function`);

  /** An object with the named methods (a transport, a chat model, a client): checked by shape. */
  const withMethods = <T>(methods: readonly string[], message: string) =>
    z.custom<T>(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        methods.every((method) => typeof (value as Record<string, unknown>)[method] === 'function'),
      message,
    );

  /** Options every router takes, whatever its targets. */
  const routerOptionsShape = {
    /** The name spans and metrics carry. @default "router" */
    name: z.string().min(1).default('router'),
    /** Attempt spans and router metrics through @opentelemetry/api (a no-op unless an SDK is registered). @default true */
    tracing: z.boolean().default(true),
    /** Where calls go. @default a fallback chain over `targets` in the order listed */
    route: routeNodeSchema.optional(),
    /** Breaker options for every target (a target's own `breaker` overrides them field by field). */
    breaker: breakerOptionsSchema.partial().default({}),
    retry: retrySchema.default({
      maxRetries: 2,
      baseDelayMs: 50,
      maxDelayMs: 2_000,
      budget: { ratio: 0.2, minPerSecond: 10, windowMs: 10_000 },
    }),
    /**
     * Deadline of one attempt, in ms (the call's own `timeoutMs` bounds all attempts). It moves a call
     * on to another target: the last candidate left for a call that failed elsewhere gets the rest of
     * the call's `timeoutMs` instead, when the call has one. @default none
     */
    attemptTimeoutMs: z.number().int().positive().optional(),
    /** When every breaker is open: fail at once with BREAKER_OPEN, or try the least recently failed target. @default "fail-fast" */
    whenAllOpen: z.enum(['fail-fast', 'least-recently-failed']).default('fail-fast'),
    /**
     * First cool-down of a target that answered with backpressure and no Retry-After, in ms: it is
     * skipped that long, and the cool-down doubles only while busy answers repeat. @default 10
     */
    firstCooldownMs: z.number().nonnegative().default(10),
    /** Longest a repeating cool-down grows to (no Retry-After), in ms. @default 1000 */
    cooldownMs: z.number().nonnegative().default(1_000),
    /**
     * Longest a call waits in total, within its deadline, for a cooling target to have room again
     * when no other candidate can take it, in ms; then it fails with the last busy answer. 0: never
     * wait. Waiting for room is not a retry: it takes nothing from `retry.budget` or `maxRetries`.
     * @default 2000
     */
    capacityWaitMs: z.number().nonnegative().default(2_000),
    /** Longest cool-down a Retry-After can ask for, in ms. @default 60000 */
    maxCooldownMs: z.number().nonnegative().default(60_000),
    /**
     * Saved `toJSON()` to start from (serverless cold starts): a saved state by target name. An own
     * `__proto__` entry (a target of that name) is read like any other. @default none
     */
    initialState: z
      .custom<Record<string, BreakerSnapshot>>(
        (value) => savedStatesOf(value) !== undefined,
        "initialState must be a plain object of saved breaker states by target name (a router's toJSON())",
      )
      .transform((value) => savedStatesOf(value) as Record<string, BreakerSnapshot>)
      .optional(),
    balance: z
      .object({
        /**
         * How a group picks among its members: `weighted` (random by weight), `least-in-flight`,
         * `p2c-ewma` (the better of two by latency EWMA × in-flight) or `lowest-cost` (the cheapest
         * estimated price for the call). A group's own `strategy` overrides it. @default "weighted"
         */
        strategy: z.enum(BALANCE_STRATEGIES).default('weighted'),
        /** Time constant of the latency averages, in ms: older answers weigh e^(−age/decayMs). @default 1000 */
        decayMs: z.number().positive().finite().default(1_000),
      })
      .strict()
      .default({ strategy: 'weighted', decayMs: 1_000 }),
    /** Deadline-aware admission and priority shedding. @default { lowPriorityShare: 0.75, minSamples: 5 } */
    admission: admissionSchema(z).default({ lowPriorityShare: 0.75, minSamples: 5 }),
    /** Hedged requests for calls marked `idempotent`. @default none (no hedging) */
    hedge: hedgeSchema(z).optional(),
    /** Random source for balancing and jitter (tests). @default Math.random */
    random: fn<() => number>('random').optional(),
  };

  const targetShape = {
    /** Unique name: used in routes, events, spans and metrics. */
    name: z.string().min(1),
    /** This target's breaker options: the fields given override the router-wide `breaker`. */
    breaker: breakerOverridesSchema.optional(),
    /**
     * Estimated price of one call here, in USD, for the `lowest-cost` strategy and the fallback
     * price guard (a Triton target's share of its GPU's hourly price, say). For a chat target it
     * wins over the `prices` lookup. @default unknown (a target of unknown price is tried after priced ones)
     */
    cost: z.number().nonnegative().finite().optional(),
  };

  const readinessClient = withMethods<{
    serverReady(options?: { signal?: AbortSignal }): Promise<boolean>;
    modelReady(model: string, options?: { signal?: AbortSignal }): Promise<boolean>;
  }>(['serverReady'], 'probe.client must have serverReady()');

  const tritonTargetSchema = z
    .object({
      ...targetShape,
      /** A GrpcTransport (`createTritonClient(...).grpc`), a batcher or any other InferTransport. */
      transport: withMethods<InferTransport>(
        ['infer', 'stream'],
        'transport must be an InferTransport (infer and stream)',
      ),
      /**
       * The gRPC channel under the target, watched to take the target out of rotation the moment its
       * connection is refused (see target-ejection.ts): `client.grpc` when `transport` is a batcher or
       * an interceptor over it. @default `transport`, when it has `watchConnectivity`
       */
      connectivity: z
        .custom<ConnectivitySource>(isConnectivitySource, 'connectivity must have watchConnectivity()')
        .optional(),
      /** Active probe while open: a function, or a TritonClient (ServerReady, or ModelReady of `model`). */
      probe: z
        .union([
          fn<ProbeFunction>('probe'),
          z.object({ client: readinessClient, model: z.string().min(1).optional() }).strict(),
        ])
        .optional(),
    })
    .strict();

  const chatTargetSchema = z
    .object({
      ...targetShape,
      /** The ChatModel adapter (OpenAI, Anthropic, OpenAI-compatible, Triton-hosted LLM). */
      model: withMethods<ChatModel>(
        ['chat', 'chatStream'],
        'model must be a ChatModel (chat and chatStream)',
      ),
      /** The model name sent to this target. @default the adapter's defaultModel, else the request's */
      modelName: z.string().min(1).optional(),
      /** Context window in tokens. @default the adapter's contextWindow */
      contextWindow: z.number().int().positive().optional(),
      /**
       * Rate-limit foresight: a `createRateLimitWatch()` whose `fetch` the adapter uses; while the
       * provider's last answer says the account is out of requests or tokens until its reset, calls
       * go to other targets. @default none
       */
      rateLimits: z
        .custom<RateLimitWatch>(
          (value) => value instanceof RateLimitWatch,
          'rateLimits must be a RateLimitWatch',
        )
        .optional(),
    })
    .strict();

  /** Affinity options of a router whose calls take `Q` requests. */
  const affinitySchema = <Q>() => {
    return z
      .object({
        /**
         * The key of a call (a session id, a hash of the prompt's prefix): calls with the same key go
         * to the same member of each group while it is healthy and not overloaded (rendezvous
         * hashing). A call's own `affinityKey` wins. Without a `route`, all targets form one group.
         * @default none
         */
        key: fn<(request: Q, options: RouteCallOptions) => string | undefined>('affinity.key').optional(),
        /**
         * Bounded-load consistent hashing: a target may hold this many times its fair share of the
         * group's calls in flight before a key that lives on it spills to its next choice (1.25 in
         * the paper). Lower spreads a hot key sooner and loses more cache hits. Without it a key
         * spills only when its target is open, cooling, at `admission.maxInFlight` or too slow for
         * the call's deadline — with few calls in flight, a share-based guard fires on ordinary
         * fluctuation. @default none
         */
        maxLoadFactor: z.number().min(1).finite().optional(),
      })
      .strict()
      .default({});
  };

  const routerConfigSchema = z
    .object({
      ...routerOptionsShape,
      affinity: affinitySchema<InferRequest>(),
      targets: z.array(tritonTargetSchema).min(1, 'a router needs a target'),
    })
    .strict()
    .superRefine(checkTargets);

  const chatRouterConfigSchema = z
    .object({
      ...routerOptionsShape,
      affinity: affinitySchema<ChatRequest>(),
      targets: z.array(chatTargetSchema).min(1, 'a router needs a target'),
      /**
       * Prices for `lowest-cost` and the fallback price guard: a `PriceCatalog` from @infergate/cost
       * (or anything with its `lookup`). A target's own `cost` wins. @default none (only targets' `cost`)
       */
      prices: z
        .custom<PriceSource>(
          (value) =>
            typeof value === 'object' &&
            value !== null &&
            typeof (value as { lookup?: unknown }).lookup === 'function',
          'prices must have lookup() (a PriceCatalog)',
        )
        .optional(),
    })
    .strict()
    .superRefine(checkTargets);

  return {
    breakerOptionsSchema,
    tritonTargetSchema,
    chatTargetSchema,
    routerConfigSchema,
    chatRouterConfigSchema,
  };
}

type RouterSchemas = ReturnType<typeof buildRouterSchemas>;
let schemas: RouterSchemas | undefined;

function routerSchemas(): RouterSchemas {
  schemas ??= buildRouterSchemas(loadZod());
  return schemas;
}

/** The zod schema of a breaker's options; loads zod on first use. */
export function breakerOptionsSchema(): RouterSchemas['breakerOptionsSchema'] {
  return routerSchemas().breakerOptionsSchema;
}

/** The zod schema of `createInferRouter` options (every default documented with @default); loads zod on first use. */
export function routerConfigSchema(): RouterSchemas['routerConfigSchema'] {
  return routerSchemas().routerConfigSchema;
}

/** The zod schema of `createChatRouter` options; loads zod on first use. */
export function chatRouterConfigSchema(): RouterSchemas['chatRouterConfigSchema'] {
  return routerSchemas().chatRouterConfigSchema;
}

// Interfaces, not type aliases, so that the API reference lists every field.
/** A breaker's options (the router's `breaker`, a target's own `breaker`). */
export interface BreakerOptions extends z.input<RouterSchemas['breakerOptionsSchema']> {}
export type ResolvedBreakerOptions = z.output<RouterSchemas['breakerOptionsSchema']>;

/** Options of `createInferRouter`. */
export interface RouterOptions extends z.input<RouterSchemas['routerConfigSchema']> {}
/** @deprecated Use `RouterOptions`. */
export type RouterConfig = RouterOptions;
export type ResolvedRouterConfig = z.output<RouterSchemas['routerConfigSchema']>;
/** Options of `createChatRouter`. */
export interface ChatRouterOptions extends z.input<RouterSchemas['chatRouterConfigSchema']> {}
/** @deprecated Use `ChatRouterOptions`. */
export type ChatRouterConfig = ChatRouterOptions;
export type ResolvedChatRouterConfig = z.output<RouterSchemas['chatRouterConfigSchema']>;
/** One target of `createInferRouter`. */
export interface TritonTargetConfig extends z.input<RouterSchemas['tritonTargetSchema']> {}
/** One target of `createChatRouter`. */
export interface ChatTargetConfig extends z.input<RouterSchemas['chatTargetSchema']> {}

/** The options the engine reads, common to both routers. */
export type ResolvedRouterOptions = Omit<ResolvedRouterConfig, 'targets' | 'affinity'> & {
  affinity: { maxLoadFactor?: number | undefined; key?: unknown };
};

export type { BalanceStrategy };
