import type { ChannelOptions } from '@grpc/grpc-js';
import type { ResolvedGrpcTransportOptions } from '../options.js';

/** grpc-js channel options from the client's options; `channelOptions` given by the caller win. */
export function grpcChannelOptions(
  options: ResolvedGrpcTransportOptions,
  endpointCount: number,
): ChannelOptions {
  const channelOptions: ChannelOptions = {
    'grpc.default_compression_algorithm': { none: 0, deflate: 1, gzip: 2 }[options.compression],
    'grpc.max_send_message_length': options.maxMessageBytes,
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.keepalive_time_ms': options.keepalive.timeMs,
    'grpc.keepalive_timeout_ms': options.keepalive.timeoutMs,
    'grpc.keepalive_permit_without_calls': options.keepalive.permitWithoutCalls ? 1 : 0,
    // Each client its own connections, as the http2 engine's are: with grpc-js's process-wide pool,
    // clients of one address share a connection, so `close()` leaves it to the others, and a client
    // made after the server restarted can be handed the old connection before grpc-js has read its
    // close, and fail its first call there.
    'grpc.use_local_subchannel_pool': 1,
    ...options.channelOptions,
  };
  if (typeof options.tls === 'object' && options.tls.serverName !== undefined) {
    channelOptions['grpc.ssl_target_name_override'] = options.tls.serverName;
    channelOptions['grpc.default_authority'] = options.tls.serverName;
  }
  if (endpointCount > 1) {
    channelOptions['grpc.service_config'] = JSON.stringify({
      loadBalancingConfig: [{ [options.loadBalancing]: {} }],
    });
  }
  return channelOptions;
}
