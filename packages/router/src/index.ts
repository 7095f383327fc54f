// @infergate/router: see README.md. Public exports are listed here explicitly.

export type { AdmissionOptions } from './admission.js';
export type { BalanceStrategy } from './balance-strategy.js';
export { BALANCE_STRATEGIES } from './balance-strategy.js';
export type {
  BreakerEjection,
  BreakerInit,
  BreakerPermit,
  BreakerStateChange,
  FailureKind,
  ProbeFunction,
} from './breaker.js';
export { Breaker } from './breaker.js';
export type { BreakerSnapshot, BreakerState, BreakerStateKind, OpenTimeOptions } from './breaker-state.js';
export { openTimeMs } from './breaker-state.js';
export type { PriceSource } from './chat-price.js';
export type { ChatStreamPartial } from './chat-router.js';
export { ChatRouter, createChatRouter } from './chat-router.js';
export type { ErrorClass } from './classify.js';
export { classifyError, isGatewayFailure, toInfergateError } from './classify.js';
export type {
  BreakerOptions,
  ChatRouterConfig,
  ChatRouterOptions,
  ChatTargetConfig,
  ResolvedBreakerOptions,
  RouteNode,
  RouterConfig,
  RouterOptions,
  TritonTargetConfig,
} from './config.js';
export { breakerOptionsSchema, chatRouterConfigSchema, routerConfigSchema } from './config.js';
export { fullJitterDelay } from './full-jitter-delay.js';
export type { HedgeOptions } from './hedger.js';
export { createInferRouter, createRouter, InferRouter } from './infer-router.js';
export type { RateLimitSnapshot, RateLimitWatchOptions } from './rate-limit-watch.js';
export { createRateLimitWatch, parseRateLimitHeaders, RateLimitWatch } from './rate-limit-watch.js';
export { readinessProbe } from './readiness-probe.js';
export type { RetryBudgetOptions } from './retry-budget.js';
export { RetryBudget } from './retry-budget.js';
export type { RouteCallOptions } from './route-call-options.js';
export { planRoute } from './route-plan.js';
export type { RouterControls } from './router-base.js';
export { RouterBase } from './router-base.js';
export type {
  AttemptEvent,
  AttemptOutcome,
  BreakerStateEvent,
  FallbackEvent,
  HedgeEvent,
  RouterEventMap,
} from './router-events.js';
export { RouterEvents } from './router-events.js';
export { TargetCooling } from './target-cooling.js';
export { VERSION } from './version.js';
