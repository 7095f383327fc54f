// When a request's bytes reach the socket: the first stream on a connection idle for a few ms is
// written in the call that opens it; streams that join it in the same turn, or that follow the end
// of the last stream at once (callers sending again), are held and leave together once the
// microtask queue drains (the engine's `microtask` policy). And when a lost connection is reported.
import type { Socket } from 'node:net';
import { Duplex } from 'node:stream';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { CANCEL, FRAME_RST_STREAM, FRAME_SETTINGS, frame, frame32 } from './h2-frame-types.js';
import { H2Session } from './h2-session.js';
import type { StreamHandler } from './h2-stream.js';

/** A socket stand-in that records every write that reaches it (held writes arrive on uncork). */
class RecordingSocket extends Duplex {
  readonly arrived: Buffer[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.arrived.push(chunk);
    callback();
  }
  override _writev(
    chunks: { chunk: Buffer; encoding: BufferEncoding }[],
    callback: (error?: Error | null) => void,
  ): void {
    for (const { chunk } of chunks) this.arrived.push(chunk);
    callback();
  }
  override _read(): void {}
  setNoDelay(): this {
    return this;
  }
}

const handler: StreamHandler = { onHeaders() {}, onData() {}, onClose() {} };
const body = [Buffer.from([0, 0, 0, 0, 2, 8, 1])];
const microtasks = () => new Promise<void>((resolve) => setImmediate(resolve));

async function readySession(
  socket: RecordingSocket,
  onClose: (error: Error | undefined, streams: number) => void = () => {},
): Promise<H2Session> {
  const session = new H2Session(socket as unknown as Socket, {
    authority: '127.0.0.1:1',
    scheme: 'http',
    events: { onReady() {}, onDraining() {}, onClose },
  });
  // The server's (empty) SETTINGS: the session is ready and answers with an ACK.
  socket.emit('data', frame(FRAME_SETTINGS, 0, 0, Buffer.alloc(0)));
  await microtasks();
  expect(session.ready).toBe(true);
  return session;
}

/** Opens one call on `session`; the array collects the message each close of it reports. */
function openCall(session: H2Session): string[] {
  const ended: string[] = [];
  session.request(
    { onHeaders() {}, onData() {}, onClose: (_kind, _code, message) => ended.push(message) },
    '/svc/Method',
    undefined,
    undefined,
    body,
  );
  return ended;
}

describe('H2Session writes', () => {
  it("writes an idle connection's first request in the call that opens it", async () => {
    const socket = new RecordingSocket();
    const session = await readySession(socket);
    const before = socket.arrived.length;
    session.request(handler, '/svc/Method', undefined, undefined, body);
    // Before any microtask ran: the request is on the socket already.
    expect(socket.arrived.length).toBe(before + 1);
    session.destroy();
  });

  it('holds the requests that join it in the same turn and flushes them together', async () => {
    const socket = new RecordingSocket();
    const session = await readySession(socket);
    session.request(handler, '/svc/Method', undefined, undefined, body);
    const afterFirst = socket.arrived.length;
    session.request(handler, '/svc/Method', undefined, undefined, body);
    session.request(handler, '/svc/Method', undefined, undefined, body);
    expect(socket.arrived.length).toBe(afterFirst);
    await microtasks();
    expect(socket.arrived.length).toBe(afterFirst + 2);
    session.destroy();
  });

  it('holds a request opened as the last stream ended (a caller sending again)', async () => {
    // The session's clock stands still: the new request comes no time after the end.
    vi.useFakeTimers({ toFake: ['performance'] });
    onTestFinished(() => {
      vi.useRealTimers();
    });
    const socket = new RecordingSocket();
    const session = await readySession(socket);
    session.request(handler, '/svc/Method', undefined, undefined, body);
    await microtasks();
    const before = socket.arrived.length;
    // The server ends stream 1; its caller sends again in the same turn.
    socket.emit('data', frame32(FRAME_RST_STREAM, 1, CANCEL));
    session.request(handler, '/svc/Method', undefined, undefined, body);
    expect(socket.arrived.length).toBe(before);
    await microtasks();
    expect(socket.arrived.length).toBe(before + 1);
    session.destroy();
  });
});

describe('H2Session loss', () => {
  it("reports a connection lost with its streams at the server's end of stream, before the socket closes", async () => {
    const socket = new RecordingSocket(); // a Duplex: its 'end' leaves its writable side open, no 'close'
    const closes: number[] = [];
    const session = await readySession(socket, (_error, streams) => closes.push(streams));
    const ended = openCall(session);
    let closed = false;
    socket.once('close', () => {
      closed = true;
    });
    socket.push(null); // the server's FIN: nothing more can arrive
    for (let i = 0; i < 10 && ended.length === 0; i++) await microtasks();
    expect(ended).toEqual(['the server closed the connection']);
    expect(closes).toEqual([1]); // one stream was open: the calls on it were lost
    expect(session.closed).toBe(true);
    // The session tore the socket down itself, rather than waiting for its close.
    await microtasks();
    expect(closed || socket.destroyed).toBe(true);
  });

  it("ends an idle connection at the server's end of stream: the next request is refused here, not sent", async () => {
    const socket = new RecordingSocket();
    const closes: number[] = [];
    const session = await readySession(socket, (_error, streams) => closes.push(streams));
    socket.push(null);
    for (let i = 0; i < 10 && closes.length === 0; i++) await microtasks();
    expect(closes).toEqual([0]); // no stream was open: no call was lost
    expect(session.acceptsStreams).toBe(false);
    const written = socket.arrived.length;
    const ended = openCall(session);
    expect(ended).toHaveLength(1); // told at once that the connection is over
    expect(socket.arrived.length).toBe(written);
  });

  it('reports a connection lost with its streams at a socket error (a reset), before the socket closes', async () => {
    const socket = new RecordingSocket();
    const closes: number[] = [];
    const session = await readySession(socket, (_error, streams) => closes.push(streams));
    const ended = openCall(session);
    // The error alone, as a reset reports it before the socket's close.
    socket.emit('error', Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }));
    expect(ended).toEqual(['read ECONNRESET']);
    expect(closes).toEqual([1]);
    expect(session.closed).toBe(true);
  });

  it('reports the loss before it tears the socket down', async () => {
    const socket = new RecordingSocket();
    const order: string[] = [];
    const destroy = socket.destroy.bind(socket);
    socket.destroy = (error?: Error) => {
      order.push('socket destroyed');
      return destroy(error);
    };
    const session = await readySession(socket, () => order.push('loss reported'));
    session.request(
      { onHeaders() {}, onData() {}, onClose: () => order.push('call failed') },
      '/svc/Method',
      undefined,
      undefined,
      body,
    );
    socket.push(null);
    for (let i = 0; i < 10 && order.length < 3; i++) await microtasks();
    expect(order).toEqual(['call failed', 'loss reported', 'socket destroyed']);
  });

  /** A session on `socket` that records, in order, the loss, a fallback a few promise hops later (as a
   * router awaiting a batcher takes) and the socket's teardown. */
  async function teardownOrder(socket: RecordingSocket, lose: (socket: RecordingSocket) => void) {
    const order: string[] = [];
    const destroy = socket.destroy.bind(socket);
    socket.destroy = (error?: Error) => {
      order.push('socket destroyed');
      return destroy(error);
    };
    await readySession(socket, () => {
      order.push('loss reported');
      void Promise.resolve()
        .then(() => Promise.resolve())
        .then(() => order.push('moved on'));
    });
    lose(socket);
    for (let i = 0; i < 10 && order.length < 3; i++) await microtasks();
    return order;
  }

  it("tears the socket down after what the loss set off in the same turn, at the server's end of stream or a reset", async () => {
    expect(await teardownOrder(new RecordingSocket(), (socket) => socket.push(null))).toEqual([
      'loss reported',
      'moved on',
      'socket destroyed',
    ]);
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(await teardownOrder(new RecordingSocket(), (socket) => socket.emit('error', reset))).toEqual([
      'loss reported',
      'moved on',
      'socket destroyed',
    ]);
  });

  it('tears a socket that does not allow half-open connections down at once (Node would half-close it first)', async () => {
    expect(
      await teardownOrder(new RecordingSocket({ allowHalfOpen: false }), (socket) => socket.push(null)),
    ).toEqual(['loss reported', 'socket destroyed', 'moved on']);
  });

  it('destroys the socket at once when the session is destroyed', async () => {
    const socket = new RecordingSocket();
    const session = await readySession(socket, () => {});
    session.destroy();
    expect(socket.destroyed).toBe(true);
  });
});
