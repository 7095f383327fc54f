// Node's Buffer where there is one (faster allocation, and callers get Buffer's methods), plain
// Uint8Array and TextEncoder/TextDecoder elsewhere (Workers, Deno, browsers): nothing on the
// codec's path may require Buffer.
const NodeBuffer = (globalThis as { Buffer?: typeof Buffer }).Buffer;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Uninitialised bytes where Buffer exists (every byte is written by the caller), zeroed elsewhere. */
export function allocBytes(size: number): Uint8Array {
  return NodeBuffer !== undefined ? NodeBuffer.allocUnsafe(size) : new Uint8Array(size);
}

export function utf8Bytes(text: string): Uint8Array {
  return NodeBuffer !== undefined ? NodeBuffer.from(text, 'utf8') : encoder.encode(text);
}

export function utf8Text(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** A view of the same memory: a Buffer under Node, the Uint8Array itself elsewhere. */
export function bytesView(raw: Uint8Array): Uint8Array {
  return NodeBuffer !== undefined ? NodeBuffer.from(raw.buffer, raw.byteOffset, raw.byteLength) : raw;
}
