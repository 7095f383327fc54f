import { promisify } from 'node:util';
import { deflate, gzip } from 'node:zlib';
import type { Endpoint } from '../options.js';
import { writeFrameHeader } from './grpc-frames.js';
import { type H2Call, type H2CallOptions, type H2Status, startH2Call } from './h2-call.js';
import { H2Connection, type H2ConnectionOptions } from './h2-connection.js';

/** A call that ended with a non-OK status; the transport maps it like a grpc-js ServiceError. */
export class H2StatusError extends Error {
  readonly code: number;
  readonly details: string;
  readonly metadata: H2Status['metadata'];

  constructor(status: H2Status) {
    super(`${status.code} ${status.details}`);
    this.name = 'H2StatusError';
    this.code = status.code;
    this.details = status.details;
    this.metadata = status.metadata;
  }
}

const compressors = { gzip: promisify(gzip), deflate: promisify(deflate) };

/**
 * The request compressed as `grpc-encoding` says (flag 1 in the prefix). The body arrives framed
 * uncompressed (its first 5 bytes a prefix), as the transport builds it.
 */
async function compress(
  body: readonly Uint8Array[],
  encoding: 'gzip' | 'deflate',
): Promise<readonly Uint8Array[]> {
  const packed = await compressors[encoding](Buffer.concat(body).subarray(5));
  const prefix = Buffer.allocUnsafe(5);
  writeFrameHeader(prefix, 0, packed.byteLength);
  prefix[0] = 1;
  return [prefix, packed];
}

/** Responses a server-streaming call holds before it stops reading (flow control does the rest). */
const STREAM_HIGH_WATER = 16;

/**
 * The lean gRPC client for inference: ModelInfer and ModelStreamInfer straight on `node:http2`, one
 * connection per endpoint, calls spread round-robin over them.
 */
export class H2Engine {
  readonly #connections: H2Connection[];
  #next = 0;

  constructor(
    endpoints: readonly Endpoint[],
    options: Omit<H2ConnectionOptions, 'endpoint'> & { compression: 'none' | 'gzip' | 'deflate' },
  ) {
    const { compression, ...connection } = options;
    this.#connections = endpoints.map((endpoint) => new H2Connection({ ...connection, endpoint }));
    this.#compression = compression === 'none' ? undefined : compression;
  }

  #withEncoding(options: H2CallOptions): H2CallOptions {
    if (this.#compression === undefined) return options;
    return { ...options, headers: { ...options.headers, 'grpc-encoding': this.#compression } };
  }

  #pick(): H2Connection {
    const connection = this.#connections[this.#next % this.#connections.length] as H2Connection;
    this.#next = (this.#next + 1) % this.#connections.length;
    return connection;
  }

  /** Requests are compressed with this (`grpc-encoding`); responses are asked uncompressed. */
  readonly #compression: 'gzip' | 'deflate' | undefined;

  /** One request, one response. Rejects with H2StatusError. */
  async unary(framed: readonly Uint8Array[], options: H2CallOptions): Promise<Buffer> {
    const body = this.#compression ? await compress(framed, this.#compression) : framed;
    return new Promise<Buffer>((resolve, reject) => {
      let message: Buffer | undefined;
      let count = 0;
      startH2Call(
        this.#pick(),
        body,
        this.#withEncoding(options),
        (received) => {
          message = received;
          count++;
        },
        (status) => {
          if (status.code !== 0) reject(new H2StatusError(status));
          else if (count !== 1 || message === undefined) {
            // grpc-js's wording for both, which the error mapping reads as DATA_LOSS.
            reject(
              new H2StatusError({
                code: count === 0 ? 12 : 13,
                details:
                  count === 0
                    ? 'No message received'
                    : `Response message parsing error: ${count} messages for a unary call`,
                metadata: status.metadata,
              }),
            );
          } else resolve(message);
        },
      );
    });
  }

  /**
   * One request, a stream of responses (ModelStreamInfer with one request). Reading stops at
   * STREAM_HIGH_WATER unread responses; leaving the loop early cancels the call.
   */
  async *serverStream(framed: readonly Uint8Array[], options: H2CallOptions): AsyncIterable<Buffer> {
    const body = this.#compression ? await compress(framed, this.#compression) : framed;
    const queue: Buffer[] = [];
    let status: H2Status | undefined;
    let wake: (() => void) | undefined;
    let paused = false;
    const notify = () => {
      const waiting = wake;
      wake = undefined;
      waiting?.();
    };
    const call: H2Call = startH2Call(
      this.#pick(),
      body,
      this.#withEncoding(options),
      (message) => {
        queue.push(message);
        if (queue.length >= STREAM_HIGH_WATER && !paused) {
          paused = true;
          call.pause();
        }
        notify();
      },
      (ended) => {
        status = ended;
        notify();
      },
    );
    let done = false;
    try {
      for (;;) {
        const message = queue.shift();
        if (message !== undefined) {
          if (paused && queue.length < STREAM_HIGH_WATER / 2) {
            paused = false;
            call.resume();
          }
          yield message;
          continue;
        }
        if (status !== undefined) {
          if (status.code !== 0) throw new H2StatusError(status);
          done = true;
          return;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
      }
    } finally {
      if (!done && status === undefined) call.cancel();
    }
  }

  close(): void {
    for (const connection of this.#connections) connection.close();
  }
}
