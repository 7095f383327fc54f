// Flow control of what we receive (RFC 9113, 5.2 and 6.9): the connection's window and each
// stream's, credited back with WINDOW_UPDATE once half is used. A paused stream holds back its own
// credit only, so the server stops sending on it while the connection goes on.
import { FRAME_WINDOW_UPDATE, frame32 } from './h2-frame-types.js';
import type { FrameWriter } from './h2-frame-writer.js';
import { CONNECTION_WINDOW, STREAM_WINDOW } from './h2-settings.js';
import { type SessionStream, STATE_OPEN } from './h2-stream.js';

export class ReceiveWindow {
  readonly #writer: FrameWriter;
  #window = CONNECTION_WINDOW;
  /** Received bytes not yet credited back to the connection. */
  #unacked = 0;

  constructor(writer: FrameWriter) {
    this.#writer = writer;
  }

  /** A DATA frame of `length` bytes arrived: false if it is beyond the connection window. */
  takeConnection(length: number): boolean {
    this.#window -= length;
    if (this.#window < 0) return false;
    // The connection's credit goes back at once: a paused stream holds back its own window only.
    this.#unacked += length;
    if (this.#unacked >= CONNECTION_WINDOW / 2) {
      this.#window += this.#unacked;
      this.#writer.write(frame32(FRAME_WINDOW_UPDATE, 0, this.#unacked));
      this.#unacked = 0;
    }
    return true;
  }

  /** The same frame on its (open) stream: false if it is beyond the stream's window. */
  takeStream(stream: SessionStream, length: number): boolean {
    stream.recvWindow -= length;
    if (stream.recvWindow < 0) return false;
    if (stream.paused) stream.withheld += length;
    else stream.unacked += length;
    return true;
  }

  /** A DATA frame of the stream has been read (and did not end it): credits it back once half is used. */
  endData(stream: SessionStream): void {
    if (stream.unacked >= STREAM_WINDOW / 2) this.#credit(stream);
  }

  /** Stops crediting the stream's receive window (the server then stops once it is used up). */
  pause(stream: SessionStream): void {
    stream.paused = true;
  }

  resume(stream: SessionStream): void {
    if (!stream.paused) return;
    stream.paused = false;
    stream.unacked += stream.withheld;
    stream.withheld = 0;
    if (stream.unacked > 0 && stream.state === STATE_OPEN && !stream.remoteEnded) this.#credit(stream);
  }

  #credit(stream: SessionStream): void {
    stream.recvWindow += stream.unacked;
    this.#writer.write(frame32(FRAME_WINDOW_UPDATE, stream.id, stream.unacked));
    stream.unacked = 0;
  }
}
