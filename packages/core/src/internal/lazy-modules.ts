import { createRequire } from 'node:module';
import type * as GrpcJs from '@grpc/grpc-js';
import type * as OtelApi from '@opentelemetry/api';
import type * as Zod from 'zod';

// grpc-js, zod and the OpenTelemetry API are the heaviest imports of this package. They load on first use (the first
// client or the first validated options), so code that imports core only for its types, errors
// and codec (the llm, cost and express packages, a serverless handler's cold path) does not pay
// for them. Both publish CommonJS, so a synchronous require is enough.
const requireFromHere = createRequire(import.meta.url);

let grpcJs: typeof GrpcJs | undefined;
let otel: typeof OtelApi | undefined;
let zod: typeof Zod.z | undefined;

export function loadGrpc(): typeof GrpcJs {
  grpcJs ??= requireFromHere('@grpc/grpc-js') as typeof GrpcJs;
  return grpcJs;
}

/**
 * The OpenTelemetry API (a peer). Its providers live in a global registry, so this CommonJS copy
 * sees the SDK an application registered through either module format.
 */
export function loadOtel(): typeof OtelApi {
  otel ??= requireFromHere('@opentelemetry/api') as typeof OtelApi;
  return otel;
}

export function loadZod(): typeof Zod.z {
  zod ??= (requireFromHere('zod') as typeof Zod).z;
  return zod;
}
