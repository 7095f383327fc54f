import { ErrorCode, InfergateError } from '@infergate/core';
import type { Gateway } from './gateway.js';
import { type ErrorMappingOptions, sendError } from './http-errors.js';
import type { Handler, HttpRequest, RequestContext } from './http-types.js';
import { DEFAULT_REQUEST_ID_HEADER, requestIdOf } from './request-id.js';
import { startRequestTelemetry } from './request-telemetry.js';
import { sloOfRequest } from './slo-header.js';

export type TenantResolver =
  | { header: string }
  | { apiKeys: Readonly<Record<string, string>>; header?: string }
  | ((request: HttpRequest) => string | undefined | Promise<string | undefined>);

export interface BudgetContext {
  tenant: string;
  requestId: string;
  request: HttpRequest;
}

export interface InfergateMiddlewareOptions<G extends Gateway = Gateway> extends ErrorMappingOptions {
  /** The shared gateway, or a factory called once, lazily (serverless: reused across warm invocations). */
  gateway: G | (() => G | Promise<G>);
  /** How to find the tenant. @default { header: 'x-tenant-id' } */
  tenant?: TenantResolver;
  /** Tenant when none is found; without it such requests get 401. @default "anonymous" */
  defaultTenant?: string | undefined;
  /**
   * Reserve budget before the handler runs; throw BUDGET_EXCEEDED to refuse. The returned function
   * (if any) runs once when the response is finished or the client went away.
   */
  budget?: (context: BudgetContext) => Promise<void | (() => void | Promise<void>)>;
  /** Header carrying the caller's request id (echoed as X-Request-Id). @default "x-request-id" */
  requestIdHeader?: string;
  /**
   * A server span per request (unless an HTTP instrumentation made one), an `infergate.budget`
   * span around the budget check, and the `infergate.express.*` metrics, through
   * @opentelemetry/api (a no-op unless an SDK is registered). @default true
   */
  tracing?: boolean;
}

function header(request: HttpRequest, name: string): string | undefined {
  const value = request.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}

async function resolveTenant(request: HttpRequest, resolver: TenantResolver): Promise<string | undefined> {
  if (typeof resolver === 'function') return resolver(request);
  if ('apiKeys' in resolver) {
    const raw = resolver.header
      ? header(request, resolver.header)
      : (header(request, 'x-api-key') ?? header(request, 'authorization'));
    const key = raw?.replace(/^Bearer\s+/i, '');
    if (key === undefined) return undefined;
    const tenant = resolver.apiKeys[key];
    // An unknown key is an authentication failure, not an anonymous call.
    if (tenant === undefined) throw new InfergateError(ErrorCode.Unauthenticated, 'unknown API key');
    return tenant;
  }
  return header(request, resolver.header);
}

/**
 * Attaches `req.infergate` (gateway, tenant, request id, an AbortSignal that fires when the client
 * disconnects) and reserves budget. Errors become JSON with the mapped HTTP status.
 */
export function infergate<G extends Gateway>(options: InfergateMiddlewareOptions<G>): Handler {
  const resolver = options.tenant ?? { header: 'x-tenant-id' };
  const defaultTenant = 'defaultTenant' in options ? options.defaultTenant : 'anonymous';
  const requestIdHeader = options.requestIdHeader ?? DEFAULT_REQUEST_ID_HEADER;
  let gateway: Promise<G> | undefined;
  const getGateway = () => {
    if (gateway === undefined) {
      gateway = Promise.resolve(typeof options.gateway === 'function' ? options.gateway() : options.gateway);
      gateway.catch(() => {
        gateway = undefined; // a failed factory is tried again on the next request
      });
    }
    return gateway;
  };

  const tracing = options.tracing ?? true;
  return (request, response, next) => {
    const telemetry = startRequestTelemetry(tracing, request, response);
    const requestId = requestIdOf(request, requestIdHeader);
    response.setHeader('X-Request-Id', requestId);
    const controller = new AbortController();
    const context: RequestContext = {
      requestId,
      tenant: '',
      signal: controller.signal,
      cleanup: [],
      gateway: undefined,
      errors: {
        ...(options.budgetExceededStatus ? { budgetExceededStatus: options.budgetExceededStatus } : {}),
        ...(options.exposeInternalErrors !== undefined
          ? { exposeInternalErrors: options.exposeInternalErrors }
          : {}),
        ...(options.logError ? { logError: options.logError } : {}),
        ...(options.wwwAuthenticate ? { wwwAuthenticate: options.wwwAuthenticate } : {}),
      },
    };
    let cleaned = false;
    const cleanup = () => {
      if (cleaned) return;
      cleaned = true;
      for (const release of context.cleanup)
        void Promise.resolve()
          .then(release)
          .catch(() => {});
    };
    response.on('close', () => {
      if (!response.writableFinished) {
        controller.abort(new InfergateError(ErrorCode.Cancelled, 'the client disconnected', { requestId }));
      }
      cleanup();
    });
    const admit = async () => {
      context.gateway = await getGateway();
      const tenant = (await resolveTenant(request, resolver)) ?? defaultTenant;
      if (tenant === undefined || tenant === '') {
        throw new InfergateError(
          ErrorCode.Unauthenticated,
          'no tenant: send the tenant header or an API key',
        );
      }
      context.tenant = tenant;
      context.slo = sloOfRequest(request);
      request.infergate = context;
      const budget = options.budget;
      if (budget) {
        const release = await telemetry.budget(tenant, () => budget({ tenant, requestId, request }));
        if (release) context.cleanup.push(release);
      }
    };
    // `next` runs in the request's trace context (its server span active) only if the promise
    // continuation is attached inside it.
    telemetry.inRequest(() =>
      admit().then(
        () => next(),
        (error) => sendError(response, error, requestId, options),
      ),
    );
  };
}

/** The request's infergate context; a clear error if the middleware is missing. */
export function contextOf(request: HttpRequest): RequestContext {
  if (request.infergate === undefined) {
    throw new InfergateError(
      ErrorCode.FailedPrecondition,
      'infergate() middleware must run before this handler',
    );
  }
  return request.infergate;
}
