import { defineConfig } from 'tsup';
import { packageConfig } from '../../tsup.config.js';

export default defineConfig(
  packageConfig({
    index: 'src/index.ts',
    proto: 'src/proto.ts',
    http: 'src/http/index.ts',
    // Internal: the gRPC message reader the reference server (@infergate/testing) shares; no API promise.
    'grpc-frames': 'src/h2/grpc-frames.ts',
  }),
);
