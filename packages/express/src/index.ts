export type { ChatHandlerOptions } from './chat-handler.js';
export { chatHandler } from './chat-handler.js';
export type { ErrorHandlerOptions } from './error-handler.js';
export { errorHandler } from './error-handler.js';
export type { Gateway } from './gateway.js';
export type { ErrorLogEntry, ErrorMappingOptions } from './http-errors.js';
export { httpStatusOf, sendError } from './http-errors.js';
export type { ErrorHandler, Handler, HttpRequest, HttpResponse, Next, RequestContext } from './http-types.js';
export type { KServeHandlerOptions } from './kserve-handler.js';
export { kserveInferHandler, toKServeResponse } from './kserve-handler.js';
export type { BudgetContext, InfergateMiddlewareOptions, TenantResolver } from './middleware.js';
export { contextOf, infergate } from './middleware.js';
export type { OpenAIErrorBody } from './openai-errors.js';
export { openAIError } from './openai-errors.js';
export type { OpenAIKeyOwner, OpenAIRoutesOptions } from './openai-routes.js';
export { openAIRoutes } from './openai-routes.js';
export { requestIdOf } from './request-id.js';
export type { LazyGateway, LazyGatewayContext, LazyGatewayOptions } from './serverless.js';
export { createLazyGateway } from './serverless.js';
export type {
  FetchInvocation,
  LambdaContextLike,
  LambdaHandlerOptions,
  LambdaInvocation,
} from './serverless-handlers.js';
export { errorResponse, fetchHandler, lambdaHandler } from './serverless-handlers.js';
export { SLO_TTFT_HEADER, sloOfRequest, withSlo } from './slo-header.js';
