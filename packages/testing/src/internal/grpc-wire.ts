import { promisify } from 'node:util';
import { gunzip, inflate } from 'node:zlib';
import { FramingError } from './grpc-message-reader.js';
import { status } from './grpc-status.js';
import { ENCODING_KEY } from './request-encoding.js';

/** Headers grpc-js keeps from the request metadata handlers see (it strips these). */
const STRIPPED = new Set(['grpc-timeout', 'grpc-accept-encoding', 'accept-encoding', 'te', 'content-type']);

/**
 * Request metadata as `RecordedCall` keeps it, from HTTP/2 headers: pseudo-headers and transport
 * headers dropped, the first value of a repeated key, `-bin` values decoded and written back as
 * padded base64 (as grpc-js's Metadata gave them), `grpc-encoding` kept only when not `identity`.
 */
export function headersToMetadata(headers: Readonly<Record<string, unknown>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key in headers) {
    if (key.charCodeAt(0) === 58 /* ':' */ || STRIPPED.has(key)) continue;
    const raw = headers[key];
    const value = Array.isArray(raw) ? raw[0] : raw;
    if (typeof value !== 'string') continue;
    if (key === 'grpc-encoding' || key === ENCODING_KEY) {
      if (value !== 'identity') out['grpc-encoding'] = value;
    } else if (key.endsWith('-bin')) {
      const first = value.split(',', 1)[0] as string;
      out[key] = Buffer.from(first.trim(), 'base64').toString('base64');
    } else out[key] = value;
  }
  return out;
}

const UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/** `grpc-timeout` in ms (at most 8 digits and a unit); throws `FramingError` INTERNAL otherwise. */
export function parseTimeout(value: string): number {
  const match = /^(\d{1,8})\s*([HMSmun])$/.exec(value.trim());
  if (match === null) throw new FramingError(status.INTERNAL, `Invalid grpc-timeout value "${value}"`);
  return Number(match[1]) * (UNITS[match[2] as string] as number);
}

const inflaters = { gzip: promisify(gunzip), deflate: promisify(inflate) };

/** Decompresses a message flagged compressed, per the stream's `grpc-encoding`, up to `maxBytes`. */
export async function decompress(bytes: Buffer, encoding: string, maxBytes: number): Promise<Buffer> {
  if (encoding !== 'gzip' && encoding !== 'deflate') {
    throw new FramingError(
      encoding === 'identity' ? status.INTERNAL : status.UNIMPLEMENTED,
      encoding === 'identity'
        ? 'Received a compressed message but grpc-encoding is "identity"'
        : `Received message compressed with unsupported encoding "${encoding}"`,
    );
  }
  try {
    return await inflaters[encoding](bytes, { maxOutputLength: maxBytes });
  } catch (error) {
    if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new FramingError(
        status.RESOURCE_EXHAUSTED,
        `Received message that decompresses to a size larger than ${maxBytes}`,
      );
    }
    throw new FramingError(status.INTERNAL, 'Failed to decompress message');
  }
}

/** `grpc-message`: the gRPC spec's percent-encoding (bytes outside 0x20–0x7E, and '%'). */
export function encodeGrpcMessage(text: string): string {
  if (/^[\x20-\x24\x26-\x7e]*$/.test(text)) return text;
  let out = '';
  for (const byte of Buffer.from(text, 'utf8')) {
    out +=
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** A message's 5-byte gRPC prefix (uncompressed). */
export function messagePrefix(length: number): Buffer {
  const prefix = Buffer.allocUnsafe(5);
  prefix[0] = 0;
  prefix.writeUInt32BE(length, 1);
  return prefix;
}
