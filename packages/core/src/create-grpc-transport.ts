import { GrpcTransport } from './grpc-transport.js';
import { type GrpcTransportOptions, parseGrpcTransportOptions } from './options.js';

/**
 * One gRPC endpoint as an InferTransport, without a client around it: what a router target or a
 * batcher wraps. Takes the client's options (validated the same way) minus interceptors.
 */
export function createGrpcTransport(options: GrpcTransportOptions): GrpcTransport {
  return new GrpcTransport(parseGrpcTransportOptions(options, 'gRPC transport options'));
}
