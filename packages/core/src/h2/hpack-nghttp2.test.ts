// HpackEncoder and HpackDecoder against nghttp2 (node:http2's server): our encoder's requests, its
// encoder's answers, over one raw connection whose tables both change.
import {
  createServer,
  type IncomingHttpHeaders,
  type OutgoingHttpHeaders,
  type ServerHttp2Session,
} from 'node:http2';
import { connect, type Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { HpackDecoder, HpackEncoder, HpackError } from './hpack.js';

type Field = readonly [string, string];

function decodeAll(decoder: HpackDecoder, block: Uint8Array): Field[] {
  const fields: Field[] = [];
  decoder.decode(block, (name, value) => fields.push([name, value]));
  return fields;
}

/** A small deterministic generator (mulberry32), so a failing run can be replayed. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

const FRAME_HEADERS = 0x1;
const FRAME_SETTINGS = 0x4;
const FRAME_PING = 0x6;
const FRAME_GOAWAY = 0x7;
const FRAME_RST_STREAM = 0x3;
const FRAME_CONTINUATION = 0x9;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;

function frame(type: number, flags: number, stream: number, payload: Uint8Array = new Uint8Array(0)): Buffer {
  const out = Buffer.alloc(9 + payload.length);
  out.writeUIntBE(payload.length, 0, 3);
  out[3] = type;
  out[4] = flags;
  out.writeUInt32BE(stream, 5);
  out.set(payload, 9);
  return out;
}

/**
 * The client side of one raw HTTP/2 connection, just enough for header blocks: answers SETTINGS and
 * PING, joins HEADERS + CONTINUATION and decodes each block with `decoder` in arrival order.
 */
class RawClient {
  readonly blocks = new Map<number, Field[][]>();
  readonly ended = new Set<number>();
  continuations = 0;
  /** Every header block received, joined, in order. */
  readonly rawBlocks: Array<{ stream: number; block: Buffer }> = [];
  peerTableSize: number | undefined;
  #buffered = Buffer.alloc(0);
  #pending: { stream: number; flags: number; parts: Buffer[] } | undefined;
  #settled = false;
  #onProgress: (() => void) | undefined;
  failure: Error | undefined;

  constructor(
    readonly socket: Socket,
    readonly decoder: HpackDecoder,
    readonly onTableSize: (size: number) => void,
  ) {
    socket.on('data', (chunk: Buffer) => {
      try {
        this.#read(chunk);
      } catch (error) {
        this.failure = error as Error;
        socket.destroy();
      }
      this.#onProgress?.();
    });
    socket.on('close', () => {
      this.failure ??= new Error('the server closed the connection');
      this.#onProgress?.();
    });
  }

  /** Waits (at most `ms`) until the server's SETTINGS arrived. */
  settings(ms: number): Promise<void> {
    return this.#until(() => this.#settled, ms, 'the server SETTINGS frame');
  }

  /** Waits (at most `ms`) until every stream in `streams` ended. */
  ends(streams: number[], ms: number): Promise<void> {
    return this.#until(
      () => streams.every((stream) => this.ended.has(stream)),
      ms,
      'the end of every stream',
    );
  }

  #until(done: () => boolean, ms: number, what: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), ms);
      this.#onProgress = () => {
        if (this.failure !== undefined) reject(this.failure);
        else if (!done()) return;
        else resolve();
        clearTimeout(timer);
        this.#onProgress = undefined;
      };
      this.#onProgress();
    });
  }

  #read(chunk: Buffer): void {
    this.#buffered = Buffer.concat([this.#buffered, chunk]);
    while (this.#buffered.length >= 9) {
      const length = this.#buffered.readUIntBE(0, 3);
      if (this.#buffered.length < 9 + length) return;
      const type = this.#buffered[3] as number;
      const flags = this.#buffered[4] as number;
      const stream = this.#buffered.readUInt32BE(5) & 0x7fffffff;
      const payload = this.#buffered.subarray(9, 9 + length);
      this.#buffered = this.#buffered.subarray(9 + length);
      this.#frame(type, flags, stream, payload);
    }
  }

  #frame(type: number, flags: number, stream: number, payload: Buffer): void {
    if (this.#pending !== undefined && type !== FRAME_CONTINUATION) throw new Error('CONTINUATION expected');
    if (type === FRAME_SETTINGS && (flags & 1) === 0) {
      for (let at = 0; at + 6 <= payload.length; at += 6) {
        if (payload.readUInt16BE(at) === 0x1) {
          this.peerTableSize = payload.readUInt32BE(at + 2);
          this.onTableSize(this.peerTableSize);
        }
      }
      this.socket.write(frame(FRAME_SETTINGS, 1, 0));
      this.#settled = true;
    } else if (type === FRAME_PING && (flags & 1) === 0) {
      this.socket.write(frame(FRAME_PING, 1, 0, payload));
    } else if (type === FRAME_GOAWAY || type === FRAME_RST_STREAM) {
      throw new Error(`the server sent frame type ${type}: ${payload.toString('hex')}`);
    } else if (type === FRAME_HEADERS) {
      let start = 0;
      let end = payload.length;
      if (flags & 0x8) {
        start += 1;
        end -= payload[0] as number;
      }
      if (flags & 0x20) start += 5;
      this.#pending = { stream, flags, parts: [payload.subarray(start, end)] };
    } else if (type === FRAME_CONTINUATION) {
      if (this.#pending?.stream !== stream) throw new Error('unexpected CONTINUATION');
      this.#pending.parts.push(payload);
      this.continuations++;
    } else {
      return;
    }
    if (this.#pending !== undefined && (flags & END_HEADERS) !== 0) {
      const { stream: id, flags: first, parts } = this.#pending;
      this.#pending = undefined;
      const block = Buffer.concat(parts);
      this.rawBlocks.push({ stream: id, block });
      const blocks = this.blocks.get(id) ?? [];
      blocks.push(decodeAll(this.decoder, block));
      this.blocks.set(id, blocks);
      if (first & END_STREAM) this.ended.add(id);
    }
  }
}

describe('HpackEncoder and HpackDecoder against nghttp2 (a node:http2 server)', () => {
  it('carries 50 requests and their answers and trailers on one connection, both tables changing', async () => {
    const random = seeded(16);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const text = (length: number, alphabet: string) =>
      Array.from({ length }, () => pick([...alphabet])).join('');
    const PRINTABLE = Array.from({ length: 94 }, (_, i) => String.fromCharCode(0x21 + i)).join('');
    const LATIN1 = `${PRINTABLE}\u00e9\u00fc\u00ff\u0080`;
    const pool = ['ok', 'application/grpc', 'x'.repeat(40), 'trace-1f2e3d', 'gzip'];
    /** Random fields: names that repeat across answers, values that repeat or not, some long. */
    const fields = (prefix: string, count: number): Record<string, string> => {
      const out: Record<string, string> = {};
      for (let i = 0; i < count; i++) {
        const name = `${prefix}-${text(1 + Math.floor(random() * 2), 'abcdef')}`;
        const roll = random();
        out[name] =
          roll < 0.4
            ? pick(pool)
            : roll < 0.9
              ? text(Math.floor(random() * 60), 'abcdefghijklmnopqrstuvwxyz0123456789-')
              : `${text(1, PRINTABLE)}${text(Math.floor(random() * 300), LATIN1)}${text(1, PRINTABLE)}`;
      }
      return out;
    };

    const answered = new Map<number, { headers: Record<string, string>; trailers: Record<string, string> }>();
    const seen = new Map<number, IncomingHttpHeaders>();
    // The server asks for a 256-octet table from our encoder: we must announce it and evict to fit.
    const server = createServer({ settings: { headerTableSize: 256 } });
    const sessions: ServerHttp2Session[] = [];
    server.on('session', (session) => sessions.push(session));
    server.on('stream', (stream, headers) => {
      const id = stream.id as number;
      seen.set(id, headers);
      const sent: Record<string, string> = {
        date: 'Tue, 01 Dec 2026 13:00:00 GMT',
        ...fields('x-h', 1 + Math.floor(random() * 8)),
      };
      // One answer larger than a frame (16 KiB): nghttp2 sends it as HEADERS + CONTINUATION.
      if (id === 21) sent['x-large'] = text(30_000, 'aceiost');
      const trailers = {
        'grpc-status': pick(['0', '0', '5', '14']),
        'grpc-message': pick(['', 'not found', text(30, PRINTABLE)]),
        ...fields('x-t', Math.floor(random() * 4)),
      };
      answered.set(id, { headers: sent, trailers });
      stream.respond({ ':status': 200, ...sent } satisfies OutgoingHttpHeaders, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers(trailers));
      stream.end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const socket = connect(port, '127.0.0.1');
    socket.on('error', () => {});
    try {
      // We advertise a 1024-octet table: nghttp2's encoder must announce it and evict more often.
      const encoder = new HpackEncoder();
      const client = new RawClient(socket, new HpackDecoder(1024), (size) => encoder.setMaxTableSize(size));
      const ourSettings = Buffer.alloc(6);
      ourSettings.writeUInt16BE(0x1, 0);
      ourSettings.writeUInt32BE(1024, 2);
      socket.write(
        Buffer.concat([
          Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'),
          frame(FRAME_SETTINGS, 0, 0, ourSettings),
        ]),
      );
      await client.settings(5_000);
      expect(client.peerTableSize).toBe(256);

      const constant = new Set([':path', ':authority', 'content-type', 'te', 'user-agent']);
      const requests = new Map<number, Field[]>();
      const firstBlocks: Buffer[] = [];
      const batch = async (first: number, count: number) => {
        const out: Buffer[] = [];
        const ids: number[] = [];
        for (let i = first; i < first + count; i++) {
          const id = 2 * i + 1;
          const request: Field[] = [
            [':method', 'POST'],
            [':scheme', 'http'],
            [':path', `/inference.GRPCInferenceService/${pick(['ModelInfer', 'ModelReady', 'ServerLive'])}`],
            [':authority', `127.0.0.1:${port}`],
            ['content-type', 'application/grpc'],
            ['te', 'trailers'],
            ['user-agent', 'infergate-hpack-test'],
            ['grpc-timeout', `${1 + Math.floor(random() * 10_000)}m`],
            ...Object.entries(fields('x-q', Math.floor(random() * 4))),
          ];
          requests.set(id, request);
          ids.push(id);
          const block = encoder.encode(request, (name) => constant.has(name));
          if (i === first) firstBlocks.push(block);
          out.push(frame(FRAME_HEADERS, END_STREAM | END_HEADERS, id, block));
        }
        socket.write(Buffer.concat(out));
        await client.ends(ids, 10_000);
      };
      await batch(0, 25);
      // Mid-connection the server shrinks our table to 64 octets (it holds one of our fields at a time).
      await new Promise<void>((resolve, reject) =>
        sessions[0]?.settings({ headerTableSize: 64 }, (error) => (error ? reject(error) : resolve())),
      );
      expect(client.peerTableSize).toBe(64);
      await batch(25, 25);
      // Each batch's first block started with the size update nghttp2 requires: 256 (3f e1 01), then
      // 64 (3f 21, followed by :method POST, 83).
      expect(firstBlocks.map((block) => block.subarray(0, 3).toString('hex'))).toEqual(['3fe101', '3f2183']);

      for (const [id, request] of requests) {
        // nghttp2 decoded what our encoder sent.
        const headers = seen.get(id);
        for (const [name, value] of request) expect(headers?.[name], `stream ${id} ${name}`).toBe(value);
        // Our decoder decoded what nghttp2 encoded: the answer's headers, then its trailers.
        const { headers: sent, trailers } = answered.get(id) ?? { headers: {}, trailers: {} };
        const [head, tail, ...rest] = client.blocks.get(id) ?? [];
        expect(rest).toEqual([]);
        expect(head).toEqual([[':status', '200'], ...Object.entries(sent)]);
        expect(tail).toEqual(Object.entries(trailers));
      }
      // nghttp2 used its dynamic table: many blocks mean nothing to a decoder without the connection's table.
      const needTable = client.rawBlocks.filter(({ block }) => {
        try {
          new HpackDecoder(1024).decode(block, () => {});
          return false;
        } catch (error) {
          expect(error).toBeInstanceOf(HpackError);
          return true;
        }
      });
      expect(needTable.length).toBeGreaterThan(client.rawBlocks.length / 2);
      // It announced our 1024-octet table first (3f e1 07), and used Huffman coding: the 30,000
      // letters of stream 21, 5 bits each, arrived in far fewer octets (still over one frame).
      expect(client.rawBlocks[0]?.block.subarray(0, 3).toString('hex')).toBe('3fe107');
      const large = client.rawBlocks.find(({ stream }) => stream === 21)?.block;
      expect(large?.length).toBeLessThan(0.7 * 30_000);
      expect(client.continuations).toBeGreaterThan(0);
    } finally {
      socket.destroy();
      for (const session of sessions) session.destroy();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
