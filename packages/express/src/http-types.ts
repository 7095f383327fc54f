import type { IncomingMessage, ServerResponse } from 'node:http';
import type { CallSlo } from '@infergate/core';
import type { ErrorMappingOptions } from './http-errors.js';

/**
 * The parts of Express's request and response this package uses, as structural types: Express stays
 * an optional peer and its types are not needed to compile against us.
 */
export interface HttpRequest extends IncomingMessage {
  params?: Record<string, string | undefined>;
  body?: unknown;
  infergate?: RequestContext;
}

export type HttpResponse = ServerResponse;
export type Next = (error?: unknown) => void;
export type Handler = (request: HttpRequest, response: HttpResponse, next: Next) => void;
export type ErrorHandler = (error: unknown, request: HttpRequest, response: HttpResponse, next: Next) => void;

/** What the middleware attaches to each request as `req.infergate`. */
export interface RequestContext {
  requestId: string;
  tenant: string;
  /** Aborts when the client disconnects before the response is complete. */
  signal: AbortSignal;
  /** Runs the request's release hooks (budget reservations) once; called when the response ends. */
  cleanup: Array<() => void | Promise<void>>;
  gateway: unknown;
  /** How errors of this request map to HTTP (from the middleware's options). */
  errors: ErrorMappingOptions;
  /** The request's `x-slo-ttft-ms`, carried into its calls' context for the router. */
  slo?: CallSlo | undefined;
}
