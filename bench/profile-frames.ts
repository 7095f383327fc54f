// What each client puts on the wire at 1 MiB: a TCP proxy between a client and the reference server
// (in its own process) that parses the HTTP/2 frames both ways and counts them per call: DATA frames
// and their sizes, WINDOW_UPDATEs, SETTINGS announced, HEADERS, and the socket reads and writes
// the proxy saw. The server's CPU per call follows the frames it must read and write, so this shows
// why one client costs the server more than another.
//   node scripts/bootstrap.mjs --dist bench/profile-frames.ts [--elements 262144] [--concurrency 16]
//        [--calls 200] [--clients core,tc_aio] [--triton]
// --triton: against real Triton (interop venv) on its plain Python-backend `identity_fp32_py` instead.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer, type Socket, connect as tcpConnect } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createTritonClient } from '@infergate/core';
import { startTriton } from '../test/interop/triton-harness.js';
import { flag, ROOT } from './lib.js';
import { startServerProcess } from './server-process.js';

const TYPES = [
  'DATA',
  'HEADERS',
  'PRIORITY',
  'RST_STREAM',
  'SETTINGS',
  'PUSH_PROMISE',
  'PING',
  'GOAWAY',
  'WINDOW_UPDATE',
  'CONTINUATION',
];
const SETTING_NAMES: Record<number, string> = {
  1: 'HEADER_TABLE_SIZE',
  2: 'ENABLE_PUSH',
  3: 'MAX_CONCURRENT_STREAMS',
  4: 'INITIAL_WINDOW_SIZE',
  5: 'MAX_FRAME_SIZE',
  6: 'MAX_HEADER_LIST_SIZE',
};

/** Frames of one direction of one connection. */
class Census {
  frames = new Map<string, number>();
  dataBytes = 0;
  dataSizes = new Map<number, number>();
  windowUpdates: number[] = [];
  settings: string[] = [];
  chunks = 0;
  #buffer = Buffer.alloc(0);
  #preface: number;

  constructor(preface: number) {
    this.#preface = preface;
  }

  push(chunk: Buffer): void {
    this.chunks++;
    let buffer = this.#buffer.byteLength === 0 ? chunk : Buffer.concat([this.#buffer, chunk]);
    if (this.#preface > 0) {
      const skip = Math.min(this.#preface, buffer.byteLength);
      this.#preface -= skip;
      buffer = buffer.subarray(skip);
    }
    let at = 0;
    while (buffer.byteLength - at >= 9) {
      const length = buffer.readUIntBE(at, 3);
      if (buffer.byteLength - at < 9 + length) break;
      const type = buffer[at + 3] as number;
      const flags = buffer[at + 4] as number;
      const name = TYPES[type] ?? `type${type}`;
      this.frames.set(name, (this.frames.get(name) ?? 0) + 1);
      const payload = buffer.subarray(at + 9, at + 9 + length);
      if (type === 0) {
        this.dataBytes += length;
        const bucket = length === 0 ? 0 : 2 ** Math.ceil(Math.log2(length));
        this.dataSizes.set(bucket, (this.dataSizes.get(bucket) ?? 0) + 1);
      } else if (type === 8) {
        this.windowUpdates.push(payload.readUInt32BE(0));
      } else if (type === 4 && (flags & 1) === 0) {
        const pairs: string[] = [];
        for (let i = 0; i + 6 <= length; i += 6) {
          pairs.push(
            `${SETTING_NAMES[payload.readUInt16BE(i)] ?? payload.readUInt16BE(i)}=${payload.readUInt32BE(i + 2)}`,
          );
        }
        this.settings.push(pairs.join(' '));
      }
      at += 9 + length;
    }
    this.#buffer = Buffer.from(buffer.subarray(at));
  }

  summary(calls: number): Record<string, unknown> {
    const perCall = (n: number) => Number((n / calls).toFixed(2));
    const updates = this.windowUpdates;
    return {
      framesPerCall: Object.fromEntries([...this.frames].map(([name, n]) => [name, perCall(n)])),
      dataKiBPerCall: Number((this.dataBytes / 1024 / calls).toFixed(1)),
      dataFrameSizes: Object.fromEntries(
        [...this.dataSizes].sort((a, b) => a[0] - b[0]).map(([size, n]) => [`<=${size}`, perCall(n)]),
      ),
      windowUpdateMeanBytes:
        updates.length === 0 ? 0 : Math.round(updates.reduce((a, b) => a + b, 0) / updates.length),
      socketChunksPerCall: perCall(this.chunks),
      settings: this.settings,
    };
  }
}

/** A proxy to `upstream` counting the frames of every connection through it. */
async function startProxy(upstream: string) {
  const [host, port] = upstream.split(':') as [string, string];
  const toServer = new Census(24);
  const toClient = new Census(0);
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const peer = tcpConnect(Number(port), host);
    sockets.add(client).add(peer);
    client.on('data', (chunk: Buffer) => {
      toServer.push(chunk);
      peer.write(chunk);
    });
    peer.on('data', (chunk: Buffer) => {
      toClient.push(chunk);
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      peer.destroy();
    };
    client.on('error', end).on('close', end);
    peer.on('error', end).on('close', end);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return {
    url: `127.0.0.1:${address.port}`,
    toServer,
    toClient,
    close: () => {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

const elements = Number(flag('elements') ?? 262_144);
const concurrency = Number(flag('concurrency') ?? 16);
const calls = Number(flag('calls') ?? 200);
const clients = (flag('clients') ?? 'core,tc_aio').split(',');
const PYTHON = join(ROOT, 'test/interop/.venv/bin/python');

const onTriton = process.argv.includes('--triton');
const model = onTriton ? 'identity_fp32_py' : 'identity';
const triton = onTriton ? await startTriton({ models: [model], restrictedEndpoints: [] }) : undefined;
const reference = triton === undefined ? await startServerProcess() : undefined;
const url = triton?.grpcAddress ?? (reference?.url as string);
try {
  for (const name of clients) {
    const proxy = await startProxy(url);
    let completed = calls;
    if (name === 'core') {
      const client = createTritonClient({ url: proxy.url, enableGpuIpc: false, timeoutMs: 60_000 });
      const data = new Float32Array(elements).fill(1.5);
      let left = calls;
      const caller = async () => {
        while (left-- > 0)
          await client.infer(model, [{ name: 'INPUT0', datatype: 'FP32', shape: [1, elements], data }]);
      };
      await Promise.all(Array.from({ length: concurrency }, caller));
      await client.close();
    } else if (existsSync(PYTHON)) {
      // A timed window of tritonclient.grpc.aio (its 20 warm-up calls count too).
      // Asynchronous: the proxy runs on this event loop.
      const run = await promisify(execFile)(
        PYTHON,
        [
          join(ROOT, 'bench/suites/unary_tritonclient.py'),
          'aio',
          proxy.url,
          model,
          String(elements),
          String(concurrency),
          '2',
        ],
        { encoding: 'utf8' },
      );
      completed =
        (JSON.parse(run.stdout.trim().split('\n').pop() ?? '{}') as { completed: number }).completed + 20;
    }
    console.log(
      JSON.stringify(
        {
          client: name,
          calls: completed,
          toServer: proxy.toServer.summary(completed),
          toClient: proxy.toClient.summary(completed),
        },
        null,
        1,
      ),
    );
    proxy.close();
  }
} finally {
  reference?.child.kill('SIGTERM');
  await triton?.stop();
}
