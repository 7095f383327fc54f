// The c64 cycle's round trip alone: one 64-row FP32 request (4 KiB) and its answer at a time, with
// a gap between calls (default 5 ms, the simulated GPU's execution at c64, during which both
// processes are idle), against servers in a child process:
//   - bare node:http2 at both ends, gRPC-shaped: HEADERS, DATA, then trailers after
//     `waitForTrailers` (what node:http2 allows a gRPC server), and the same answer with END_STREAM
//     on its DATA and no trailers (one write: the floor of this transport, not valid gRPC);
//   - a bare node:http2 client sending pre-encoded ModelInfer bytes to the reference server, and
//     `@infergate/core` against the bare server answering a pre-encoded ModelInferResponse: the
//     server's and the client's parts of what the SDK and the reference server add;
//   - `@infergate/core` against the reference server's `simulated_gpu` at zero cost (the whole
//     path of the cycle but the execution and the batcher), on its `http2` transport (node:http2)
//     and on its `lean` one (core's HTTP/2 frames on a plain socket), this build's server and, with
//     `--compare DIR`, another build's (its @infergate/testing dist/ copied inside packages/testing/,
//     e.g. main's as packages/testing/.dist-main; delete it after).
//   - a plain TCP echo of the same 4 KiB (node:net, TCP_NODELAY): the floor under any HTTP/2;
// then the same JavaScript timed after the gap and back to back (what an idle gap does to CPU work).
// The arms alternate round by round; ms as p10 / p50 / p90 of every call.
//   node scripts/bootstrap.mjs --dist bench/batcher-round-trip.ts [--gap-ms 5] [--calls 200]
//       [--rounds 6] [--compare DIR]
import { fork } from 'node:child_process';
import * as http2 from 'node:http2';
import * as net from 'node:net';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { create, toBinary } from '@bufbuild/protobuf';
import { createTritonClient } from '@infergate/core';
import { ModelInferRequestSchema, ModelInferResponseSchema } from '@infergate/core/proto';
import { startTestServer } from '@infergate/testing';
import { flag } from './lib.js';

const clock = () => Number(process.hrtime.bigint()) / 1e6;
const MESSAGE_BYTES = 4096 + 60;

const INFER_PATH = '/inference.GRPCInferenceService/ModelInfer';

/** A gRPC-framed message of `MESSAGE_BYTES` (the prefix's length, zeros after). */
function framedMessage(): Buffer {
  const message = Buffer.alloc(MESSAGE_BYTES);
  message.writeUInt32BE(MESSAGE_BYTES - 5, 1);
  return message;
}

/** `bytes` with the gRPC message prefix. */
function framed(bytes: Uint8Array): Buffer {
  const message = Buffer.alloc(bytes.byteLength + 5);
  message.writeUInt32BE(bytes.byteLength, 1);
  message.set(bytes, 5);
  return message;
}

const tensor = { datatype: 'FP32', shape: [64n, 16n] };
/** The ModelInfer request and response of one 64-row call, encoded once. */
const inferRequest = framed(
  toBinary(
    ModelInferRequestSchema,
    create(ModelInferRequestSchema, {
      modelName: 'simulated_gpu',
      inputs: [{ name: 'INPUT0', ...tensor }],
      rawInputContents: [new Uint8Array(4096)],
    }),
  ),
);
const inferResponse = framed(
  toBinary(
    ModelInferResponseSchema,
    create(ModelInferResponseSchema, {
      modelName: 'simulated_gpu',
      modelVersion: '1',
      outputs: [{ name: 'OUTPUT0', ...tensor }],
      rawOutputContents: [new Uint8Array(4096)],
    }),
  ),
);

if (process.argv.includes('--serve')) {
  const bare = http2.createServer();
  bare.on('stream', (stream, headers) => {
    const trailers = headers[':path'] !== '/plain';
    const answer = headers[':path'] === INFER_PATH ? inferResponse : framedMessage();
    stream.on('data', () => {});
    stream.on('end', () => {
      if (trailers) {
        stream.respond(
          { ':status': 200, 'content-type': 'application/grpc+proto' },
          { waitForTrailers: true },
        );
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
      } else stream.respond({ ':status': 200, 'content-type': 'application/grpc+proto' });
      stream.end(answer);
    });
  });
  await new Promise<void>((done) => bare.listen(0, '127.0.0.1', done));
  // The floor under any HTTP/2: a plain TCP echo (TCP_NODELAY both ends), 4 KiB each way.
  const echo = net.createServer({ noDelay: true }, (socket) =>
    socket.on('data', (chunk) => socket.write(chunk)),
  );
  await new Promise<void>((done) => echo.listen(0, '127.0.0.1', done));
  const zeroCost = { simulatedGpu: { baseMs: 0, perRowMs: 0 } };
  const server = await startTestServer({ ...zeroCost, transport: 'http2' });
  const lean = await startTestServer({ ...zeroCost, transport: 'lean' });
  const compare = flag('compare');
  const other =
    compare === undefined
      ? undefined
      : await (
          (await import(pathToFileURL(resolve(compare, 'index.js')).href)) as {
            startTestServer: typeof startTestServer;
          }
        ).startTestServer(zeroCost);
  process.send?.({
    bare: (bare.address() as { port: number }).port,
    echo: (echo.address() as { port: number }).port,
    url: server.url,
    leanUrl: lean.url,
    compareUrl: other?.url,
  });
  process.on('disconnect', () => process.exit(0));
} else {
  const gapMs = Number(flag('gap-ms') ?? 5);
  const calls = Number(flag('calls') ?? 200);
  const rounds = Number(flag('rounds') ?? 6);
  const child = fork(fileURLToPath(import.meta.url), ['--serve', ...process.argv.slice(2)], {
    execArgv: process.execArgv,
  });
  const { bare, echo, url, leanUrl, compareUrl } = await new Promise<{
    bare: number;
    echo: number;
    url: string;
    leanUrl: string;
    compareUrl?: string;
  }>((done) => child.once('message', (message) => done(message as never)));
  const session = http2.connect(`http://127.0.0.1:${bare}`);
  const body = framedMessage();
  const referenceSession = http2.connect(`http://${url}`);
  const bareCall =
    (path: string, to = session, message = body) =>
    () =>
      new Promise<void>((done, fail) => {
        const request = to.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc' });
        request.on('data', () => {});
        request.on('trailers', (trailers: http2.IncomingHttpHeaders) => {
          if (trailers['grpc-status'] !== '0') fail(new Error(`grpc-status ${trailers['grpc-status']}`));
        });
        request.on('end', done);
        request.on('error', fail);
        request.end(message);
      });
  const echoSocket = net.connect({ port: echo, host: '127.0.0.1', noDelay: true });
  await new Promise((done) => echoSocket.once('connect', done));
  const echoCall = () =>
    new Promise<void>((done) => {
      let got = 0;
      const onData = (chunk: Buffer) => {
        got += chunk.byteLength;
        if (got < body.byteLength) return;
        echoSocket.off('data', onData);
        done();
      };
      echoSocket.on('data', onData);
      echoSocket.write(body);
    });
  const data = new Float32Array(64 * 16);
  const clients: ReturnType<typeof createTritonClient>[] = [];
  const coreCall = (target: string) => {
    const client = createTritonClient({ url: target, enableGpuIpc: false });
    clients.push(client);
    return async () => {
      await client.infer('simulated_gpu', [{ name: 'INPUT0', datatype: 'FP32', shape: [64, 16], data }]);
    };
  };
  type Arm = [name: string, call: () => Promise<void>];
  const arms: Arm[] = [
    ['bare TCP echo, 4 KiB each way', echoCall],
    ['bare node:http2, trailers (gRPC)', bareCall('/trailers')],
    ['bare node:http2, END_STREAM on DATA', bareCall('/plain')],
    ['bare client → reference server (this build)', bareCall(INFER_PATH, referenceSession, inferRequest)],
    ['core → bare server', coreCall(`127.0.0.1:${bare}`)],
    ['core → reference server (this build)', coreCall(url)],
    ['core → reference server, lean transport', coreCall(leanUrl)],
    ...(compareUrl === undefined
      ? []
      : [[`core → reference server (${flag('compare')})`, coreCall(compareUrl)] as Arm]),
  ];
  const times = new Map<string, number[]>(arms.map(([name]) => [name, []]));
  for (const [, call] of arms) for (let i = 0; i < 100; i++) await call();
  const pause = () => new Promise((done) => setTimeout(done, gapMs));
  for (let round = 0; round < rounds; round++) {
    // The arms' order alternates round by round.
    for (const [name, call] of round % 2 === 0 ? arms : [...arms].reverse()) {
      const list = times.get(name) as number[];
      for (let i = 0; i < calls; i++) {
        if (gapMs > 0) await pause();
        const start = clock();
        await call();
        list.push(clock() - start);
      }
    }
  }
  console.log(
    `c1, 64 × 16 FP32 per call, ${gapMs} ms between calls, ${rounds} × ${calls} calls per arm, load ${loadavg()
      .map((value) => value.toFixed(2))
      .join(' ')}; ms as p10 / p50 / p90`,
  );
  for (const [name, list] of times) {
    list.sort((a, b) => a - b);
    const at = (p: number) =>
      (list[Math.min(list.length - 1, Math.floor(p * list.length))] as number).toFixed(3);
    console.log(`  ${name.padEnd(44)} ${at(0.1)} / ${at(0.5)} / ${at(0.9)}`);
  }
  await coldProbe(gapMs);
  session.close();
  referenceSession.close();
  echoSocket.destroy();
  for (const client of clients) await client.close();
  child.disconnect();
}

/**
 * The same JavaScript timed right after a `gapMs` sleep and back to back (interleaved): arithmetic
 * alone, a walk over 2,000 small objects (~100 KiB of heap), and JSON and base64 work (code and
 * data). What an idle gap costs the work that follows it, apart from any I/O.
 */
async function coldProbe(gapMs: number): Promise<void> {
  if (gapMs <= 0) return;
  const objects = Array.from({ length: 2000 }, (_, i) => ({ a: i, b: String(i), c: [i, i + 1] }));
  const text = 'x'.repeat(5000);
  const kinds: [string, () => number][] = [
    [
      'arithmetic',
      () => {
        let sum = 0;
        for (let i = 0; i < 20_000; i++) sum += Math.sqrt(i);
        return sum;
      },
    ],
    [
      'object walk',
      () => {
        let sum = 0;
        for (const o of objects) sum += o.a + o.b.length + (o.c[1] as number);
        return sum;
      },
    ],
    [
      'JSON + base64',
      () => JSON.stringify(objects.slice(0, 200)).length + Buffer.from(text).toString('base64').length,
    ],
  ];
  console.log(`the same JavaScript after a ${gapMs} ms sleep and back to back; µs p50 (p90)`);
  const pause = () => new Promise((done) => setTimeout(done, gapMs));
  let sink = 0;
  for (const [name, work] of kinds) {
    for (let i = 0; i < 200; i++) sink += work();
    const after: number[] = [];
    const hot: number[] = [];
    for (let i = 0; i < 400; i++) {
      const idle = i % 2 === 0;
      if (idle) await pause();
      else await null;
      const start = clock();
      sink += work();
      (idle ? after : hot).push((clock() - start) * 1000);
    }
    const p = (list: number[], q: number) =>
      (list.sort((a, b) => a - b)[Math.floor(q * list.length)] as number).toFixed(1);
    console.log(
      `  ${name.padEnd(16)} after sleep ${p(after, 0.5)} (${p(after, 0.9)})   back to back ${p(hot, 0.5)} (${p(hot, 0.9)})`,
    );
  }
  if (sink === 0.5) console.log(sink);
}
