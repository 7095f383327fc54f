import { createRequire } from 'node:module';
import type * as GrpcJs from '@grpc/grpc-js';
import type * as Zod from 'zod';
import type * as GrpcWire from './grpc-wire.js';

// The OpenTelemetry API's loader is a file of its own (an internal entry of the package too).
export { loadOtel, otelRegistered } from './lazy-otel.js';

// grpc-js, zod and the OpenTelemetry API are the heaviest imports of this package. They load on first use,
// so code that imports core only for its types, errors and codec (the llm, cost and express
// packages, a serverless handler's cold path) does not pay for them. zod's first use is not a
// client's valid options (internal/accept-client-options.ts reads those, decision 0025) but
// options it refuses, `clientOptionsSchema()` or the statistics poller. They publish CommonJS, so
// a synchronous require is enough.
const requireFromHere = createRequire(import.meta.url);

let grpcJs: typeof GrpcJs | undefined;
let zod: typeof Zod.z | undefined;

export function loadGrpc(): typeof GrpcJs {
  grpcJs ??= requireFromHere('@grpc/grpc-js') as typeof GrpcJs;
  return grpcJs;
}

export function loadZod(): typeof Zod.z {
  zod ??= (requireFromHere('zod') as typeof Zod).z;
  return zod;
}

let grpcWire: typeof GrpcWire | undefined;
let importGrpcWire = (): Promise<typeof GrpcWire> => import('./grpc-wire.js');
let grpcWireLoading: Promise<typeof GrpcWire> | undefined;

/**
 * The protobuf runtime, the generated descriptors and the code that uses them (grpc-wire.ts), loaded
 * once a GrpcTransport is made (in the background) or a call needs them, not at import: they were
 * most of core's import time (@bufbuild/protobuf is ~90 ES modules, and src/gen builds its
 * descriptors when evaluated). Our own ES modules cannot be required, so this one is an `import()`:
 * the built ESM output puts it in a chunk of its own (tsup.config.ts), the CommonJS output evaluates
 * it then. Calls await it until it is in; `loadedGrpcWire` then hands it out without a promise on
 * the hot paths. Decision 0024.
 */
export function loadGrpcWire(): Promise<typeof GrpcWire> {
  grpcWireLoading ??= importGrpcWire().then((loaded) => {
    grpcWire = loaded;
    return loaded;
  });
  return grpcWireLoading;
}

/** grpc-wire.ts once `loadGrpcWire` has loaded it; undefined before. */
export function loadedGrpcWire(): typeof GrpcWire | undefined {
  return grpcWire;
}

/**
 * For tests of what a call does while grpc-wire.ts loads (a load that is slow, or never ends): the
 * process's next load goes through `load`, and whatever had loaded is forgotten.
 */
export function replaceGrpcWireLoaderForTesting(load: () => Promise<typeof GrpcWire>): void {
  importGrpcWire = load;
  grpcWire = undefined;
  grpcWireLoading = undefined;
}
