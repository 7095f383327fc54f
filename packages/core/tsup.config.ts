import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.js';

const entry = {
  index: 'src/index.ts',
  proto: 'src/proto.ts',
  http: 'src/http/index.ts',
  // Internal: the gRPC message reader the reference server (@infergate/testing) shares; no API promise.
  'grpc-frames': 'src/h2/grpc-frames.ts',
  // Internal: the zod rules that the batcher's and router's hand-read options share (decision 0025).
  'option-checks': 'src/internal/option-checks.ts',
  // Internal: the OpenTelemetry API's lazy loader, which the batcher and the router share (decision 0025).
  'lazy-otel': 'src/internal/lazy-otel.ts',
  // Internal: timers for any delay (setTimeout's limit is 2^31 − 1 ms), which every package's timers share.
  'long-timer': 'src/internal/long-timer.ts',
};

export default defineConfig([
  // ESM with code splitting: internal/grpc-wire.ts (the protobuf runtime, the generated descriptors
  // and their users), which core `import()`s on the first gRPC call, becomes a chunk of its own, so
  // that importing core does not load it (see internal/lazy-modules.ts). Code the entries share
  // goes into shared chunks, one copy per process as before.
  packageConfig(entry, { format: ['esm'], splitting: true }),
  // CommonJS stays one file per entry: there the `import()` evaluates the bundled module on first
  // call, and its require of @bufbuild/protobuf runs then. Without tsup's Rollup pass (treeshake):
  // it hoists every require to the top of the file, which loaded the protobuf runtime at require.
  // esbuild still drops unused code.
  packageConfig(entry, { format: ['cjs'], clean: false, treeshake: false }),
]);
