import { randomUUID } from 'node:crypto';
import { type ErrorMappingOptions, errorAnswer } from './http-errors.js';
import { safeRequestId } from './request-id.js';
import type { LazyGateway } from './serverless.js';

/** The parts of an AWS Lambda context this package reads (structural: no aws-lambda types needed). */
export interface LambdaContextLike {
  awsRequestId?: string;
  getRemainingTimeInMillis?: () => number;
}

/** What a wrapped Lambda handler receives next to its event. */
export interface LambdaInvocation<G, C> {
  gateway: G;
  context: C;
  /** The invocation's request id (`awsRequestId`, else a new UUID). */
  requestId: string;
  /** Time left before the platform kills the invocation, less `safetyMarginMs`: a deadline for calls. */
  timeoutMs: number | undefined;
  /** True on the invocation that built the gateway. */
  coldStart: boolean;
}

export interface LambdaHandlerOptions {
  /** Taken off the remaining time, so a call's deadline fires before the platform's. @default 250 */
  safetyMarginMs?: number;
}

/**
 * An AWS-Lambda-style `(event, context) => Promise<result>` handler over a lazily built gateway:
 * the first invocation of a process builds it, warm invocations reuse it. Before returning, the
 * router state is saved when it changed and the `idle` hook runs; nothing of infergate keeps the
 * event loop alive afterwards, so `callbackWaitsForEmptyEventLoop` needs no change.
 */
export function lambdaHandler<G, E, R, C extends LambdaContextLike = LambdaContextLike>(
  gateway: LazyGateway<G>,
  handle: (event: E, invocation: LambdaInvocation<G, C>) => Promise<R>,
  options: LambdaHandlerOptions = {},
): (event: E, context: C) => Promise<R> {
  const margin = options.safetyMarginMs ?? 250;
  return async (event, context) => {
    const { gateway: built, coldStart } = await gateway.acquire();
    const remaining = context.getRemainingTimeInMillis?.();
    try {
      return await handle(event, {
        gateway: built,
        context,
        requestId: context.awsRequestId ?? randomUUID(),
        timeoutMs: remaining === undefined ? undefined : Math.max(1, remaining - margin),
        coldStart,
      });
    } finally {
      await gateway.idle();
    }
  };
}

/** What a wrapped fetch handler receives next to its Request. */
export interface FetchInvocation<G> {
  gateway: G;
  /** `x-request-id` of the request, else a new UUID; echoed as `X-Request-Id`. */
  requestId: string;
  /** The request's signal: aborts when the client goes away (where the runtime supports it). */
  signal: AbortSignal;
  coldStart: boolean;
}

/** The JSON error answer of the Express handlers, as a Web `Response`. */
export function errorResponse(
  thrown: unknown,
  requestId: string,
  options: ErrorMappingOptions = {},
): Response {
  const { status, headers, body } = errorAnswer(thrown, requestId, options);
  return new Response(body, { status, headers });
}

/**
 * A Web-standard `(request: Request) => Promise<Response>` handler (Vercel/Netlify functions,
 * Cloudflare-style runtimes on Node, Hono, Next.js route handlers) over a lazily built gateway.
 * Errors become the same JSON body and status as the Express error handler.
 */
export function fetchHandler<G>(
  gateway: LazyGateway<G>,
  handle: (request: Request, invocation: FetchInvocation<G>) => Promise<Response>,
  options: ErrorMappingOptions = {},
): (request: Request) => Promise<Response> {
  return async (request) => {
    const requestId = safeRequestId(request.headers.get('x-request-id'));
    try {
      const { gateway: built, coldStart } = await gateway.acquire();
      const response = await handle(request, {
        gateway: built,
        requestId,
        signal: request.signal,
        coldStart,
      });
      if (!response.headers.has('x-request-id')) {
        try {
          response.headers.set('x-request-id', requestId);
        } catch {
          // A proxied fetch() response has immutable headers; it goes back as it is.
        }
      }
      return response;
    } catch (error) {
      return errorResponse(error, requestId, options);
    } finally {
      await gateway.idle().catch(() => undefined);
    }
  };
}
