import { RPC_SERVICE } from './tracing.js';

/** How grpc-js turns one message into bytes and back for a method. */
export type Serialize<T> = (value: T) => Buffer;
export type Deserialize<T> = (bytes: Buffer) => T;

/** For messages already encoded (inference requests) or decoded by the caller. */
export const identityBuffer = (value: Buffer) => value;

/** The gRPC path of one KServe v2 method. */
export function methodPath(name: string): string {
  return `/${RPC_SERVICE}/${name}`;
}
