/**
 * A reusable UTF-8 buffer for the collections' string-key helpers: `encodeInto` a scratch array
 * that grows when needed, so looking up a string key allocates nothing for the key itself (the
 * allocation-free access that iPipe's DMO hot paths call for, in TypeScript's idiom).
 */

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Whether `decoder` reads views of a SharedArrayBuffer (Node's does; the Encoding spec's did not
 * always). Domains live in SharedArrayBuffers even when not shared (domain.ts), so a decoder that
 * refused them would make every decode copy.
 */
const DECODES_SHARED_VIEWS = ((): boolean => {
  if (typeof SharedArrayBuffer === 'undefined') return false;
  try {
    decoder.decode(new Uint8Array(new SharedArrayBuffer(1)));
    return true;
  } catch {
    return false;
  }
})();

/** A growable UTF-8 scratch buffer owned by one collection handle. */
export class Utf8Scratch {
  #bytes = new Uint8Array(64);

  /** The scratch array; after `encode`, its first `length` bytes are the encoded string. */
  get bytes(): Uint8Array {
    return this.#bytes;
  }

  /** Encodes `text` into the scratch array and returns its byte length. */
  encode(text: string): number {
    // A UTF-16 code unit never needs more than 3 UTF-8 bytes.
    if (text.length * 3 > this.#bytes.length) this.#bytes = new Uint8Array(text.length * 3);
    return encoder.encodeInto(text, this.#bytes).written;
  }

  /** Decodes `memory[start, end)`; copies first where the decoder refuses shared memory. */
  decode(memory: Uint8Array, start: number, end: number): string {
    const view = memory.subarray(start, end);
    return decoder.decode(DECODES_SHARED_VIEWS || memory.buffer instanceof ArrayBuffer ? view : view.slice());
  }
}
