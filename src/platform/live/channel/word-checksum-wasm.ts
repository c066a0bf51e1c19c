/**
 * The ring's record checksum (word-checksum.ts) compiled to WebAssembly, for rings whose memory is
 * a shared `WebAssembly.Memory` (iPipe §3 "Host–NIC messaging": a checksum on every message, paid
 * twice per message — sealed by the producer, verified by the consumer).
 *
 * Why. In JavaScript each `Int32Array` load is ~8 instructions (index add with an overflow check,
 * sign extension, bounds check, base + external pointer) and V8 spills the unrolled loop's indexes;
 * a WebAssembly `i32.load` is one instruction (bounds are checked by guard pages), so the same
 * four-lane hash runs at about the multiplier's throughput: 1.3–1.8× faster at 64 B–1 KiB on this
 * machine class (docs/ring-throughput.md). The function is the same, bit for bit, as
 * `ringChecksum`: a ring side that has only the `SharedArrayBuffer` (an older caller that posted
 * `ring.buffer`) keeps using the JavaScript version, and the two sides still agree
 * (test/platform/live/word-checksum-wasm.test.ts compares them at every length 0–300 and at
 * random lengths up to 4 KiB).
 *
 * The module is assembled here from named opcodes rather than shipped as a binary, so it can be
 * read next to the JavaScript it mirrors; it is compiled once per thread, and instantiated once per
 * ring side over that ring's memory.
 */

/** The parts of a shared `WebAssembly.Memory` the ring uses (lib.dom has the full type; this project compiles without it). */
export interface SharedWasmMemory {
  readonly buffer: SharedArrayBuffer;
}

/** A checksum over the memory a function was made for: `length` bytes at absolute byte offset `start` (4-aligned). */
export type WasmChecksum = (start: number, length: number) => number;

interface WasmApi {
  readonly Memory: new (descriptor: {
    readonly initial: number;
    readonly maximum: number;
    readonly shared: boolean;
  }) => SharedWasmMemory;
  readonly Module: new (bytes: Uint8Array) => object;
  readonly Instance: new (module: object, imports: object) => { readonly exports: Record<string, unknown> };
}

const wasmApi = (globalThis as { readonly WebAssembly?: WasmApi }).WebAssembly;

const PAGE_BYTES = 65_536;
const MAX_PAGES = 65_536;

/** The same constants as word-checksum.ts. */
const K1 = 0x9e3779b1 | 0;
const K2 = 0x85ebca77 | 0;
const K3 = 0xc2b2ae3d | 0;
const K4 = 0x27d4eb2f | 0;

/**
 * A shared WebAssembly memory of at least `bytes` bytes (whole 64 KiB pages), or undefined where
 * the engine has no shared WebAssembly memory (the ring then uses a plain SharedArrayBuffer).
 */
export function allocateSharedWasmMemory(bytes: number): SharedWasmMemory | undefined {
  if (wasmApi === undefined || wasmMemoryRefused) return undefined;
  const pages = Math.ceil(bytes / PAGE_BYTES);
  if (pages > MAX_PAGES) return undefined;
  try {
    return new wasmApi.Memory({ initial: pages, maximum: pages, shared: true });
  } catch {
    // Each shared WebAssembly memory reserves ~10 GiB of address space (its guard region); where
    // that fails (RLIMIT_AS, a 39-bit arm64 address space, very many rings) V8 first runs three
    // full collections, so a refusal is remembered and later rings go straight to a
    // SharedArrayBuffer (JavaScript checksum) instead of paying that on every ring.
    wasmMemoryRefused = true;
    return undefined;
  }
}

/** Set once the engine refused a shared WebAssembly memory (see `allocateSharedWasmMemory`). */
let wasmMemoryRefused = false;

/** Whether a shared WebAssembly memory was refused in this thread (rings then use JavaScript). */
export function sharedWasmMemoryRefused(): boolean {
  return wasmMemoryRefused;
}

/** True for a `WebAssembly.Memory` (as posted from another thread). */
export function isSharedWasmMemory(value: unknown): value is SharedWasmMemory {
  return (
    wasmApi !== undefined && value instanceof wasmApi.Memory && value.buffer instanceof SharedArrayBuffer
  );
}

let compiled: object | null | undefined;

/** The checksum over `memory`, or undefined if this engine cannot compile or instantiate the module. */
export function wasmRingChecksum(memory: SharedWasmMemory): WasmChecksum | undefined {
  if (wasmApi === undefined) return undefined;
  if (compiled === undefined) {
    try {
      compiled = new wasmApi.Module(assembleChecksumModule());
    } catch {
      compiled = null;
    }
  }
  if (compiled === null) return undefined;
  try {
    const instance = new wasmApi.Instance(compiled, { env: { memory } });
    const checksum = instance.exports['checksum'];
    return typeof checksum === 'function' ? (checksum as WasmChecksum) : undefined;
  } catch {
    return undefined;
  }
}

// ───────────────────────────── the module ─────────────────────────────

const OP = {
  block: 0x02,
  loop: 0x03,
  if: 0x04,
  end: 0x0b,
  brIf: 0x0d,
  localGet: 0x20,
  localSet: 0x21,
  localTee: 0x22,
  i32Load: 0x28,
  i32Load8U: 0x2d,
  i32Const: 0x41,
  i32Eq: 0x46,
  i32Ne: 0x47,
  i32LtU: 0x49,
  i32GeU: 0x4f,
  i32Add: 0x6a,
  i32Mul: 0x6c,
  i32And: 0x71,
  i32Or: 0x72,
  i32Xor: 0x73,
  i32Shl: 0x74,
  i32ShrU: 0x76,
  i32Rotl: 0x77,
} as const;
const EMPTY_BLOCK = 0x40;
const I32 = 0x7f;

// Locals: the two parameters, then the four lanes, the cursor, an end mark and a scratch value.
const START = 0;
const LENGTH = 1;
const H0 = 2;
const H1 = 3;
const H2 = 4;
const H3 = 5;
const CURSOR = 6;
const END = 7;
const X = 8;
const EXTRA_LOCALS = 7;

/** Each lane's rotation and multiplier, as in word-checksum.ts. */
const LANES: readonly (readonly [lane: number, rotation: number, multiplier: number])[] = [
  [H0, 15, K1],
  [H1, 13, K2],
  [H2, 16, K3],
  [H3, 17, K1],
];

function assembleChecksumModule(): Uint8Array {
  const code: number[] = [];
  const emit = (...bytes: number[]): void => {
    for (const byte of bytes) code.push(byte);
  };
  const get = (local: number): void => emit(OP.localGet, local);
  const set = (local: number): void => emit(OP.localSet, local);
  const constant = (value: number): void => emit(OP.i32Const, ...signedLeb(value));
  /** h = imul(rotl(h ^ word at cursor + offset, r), K): one step of a lane. */
  const step = (lane: number, rotation: number, multiplier: number, offset: number): void => {
    get(lane);
    get(CURSOR);
    emit(OP.i32Load, 2, ...unsignedLeb(offset));
    emit(OP.i32Xor);
    constant(rotation);
    emit(OP.i32Rotl);
    constant(multiplier);
    emit(OP.i32Mul);
    set(lane);
  };
  /** Runs `body` while CURSOR < END (checked first: it may run zero times), stepping CURSOR by `stride`. */
  const loopToEnd = (stride: number, body: () => void): void => {
    emit(OP.block, EMPTY_BLOCK);
    get(CURSOR);
    get(END);
    emit(OP.i32GeU, OP.brIf, 0);
    emit(OP.loop, EMPTY_BLOCK);
    body();
    get(CURSOR);
    constant(stride);
    emit(OP.i32Add, OP.localTee, CURSOR);
    get(END);
    emit(OP.i32LtU, OP.brIf, 0, OP.end, OP.end);
  };
  /** x ^= x >>> shift, on the value on the stack, leaving it there (through X). */
  const xorShift = (shift: number): void => {
    emit(OP.localTee, X);
    get(X);
    constant(shift);
    emit(OP.i32ShrU, OP.i32Xor);
  };
  /** fmix of word-checksum.ts on the value on the stack. */
  const fmix = (): void => {
    xorShift(16);
    constant(K2);
    emit(OP.i32Mul);
    xorShift(13);
    constant(K3);
    emit(OP.i32Mul);
    xorShift(16);
  };

  // h0 = imul(length ^ K4, K2); h1 = K1; h2 = K3; h3 = K4.
  get(LENGTH);
  constant(K4);
  emit(OP.i32Xor);
  constant(K2);
  emit(OP.i32Mul);
  set(H0);
  constant(K1);
  set(H1);
  constant(K3);
  set(H2);
  constant(K4);
  set(H3);
  // Eight words a round, two per lane, word i to lane i mod 4.
  get(START);
  set(CURSOR);
  get(START);
  get(LENGTH);
  constant(~31);
  emit(OP.i32And, OP.i32Add);
  set(END);
  loopToEnd(32, () => {
    for (const [index, [lane, rotation, multiplier]] of LANES.entries())
      step(lane, rotation, multiplier, index * 4);
    for (const [index, [lane, rotation, multiplier]] of LANES.entries())
      step(lane, rotation, multiplier, 16 + index * 4);
  });
  // Then four words if there are four more.
  get(LENGTH);
  constant(16);
  emit(OP.i32And, OP.if, EMPTY_BLOCK);
  for (const [index, [lane, rotation, multiplier]] of LANES.entries())
    step(lane, rotation, multiplier, index * 4);
  get(CURSOR);
  constant(16);
  emit(OP.i32Add);
  set(CURSOR);
  emit(OP.end);
  // Then up to three single words, all into lane 0.
  get(CURSOR);
  get(LENGTH);
  constant(12);
  emit(OP.i32And, OP.i32Add);
  set(END);
  loopToEnd(4, () => step(H0, 15, K1, 0));
  // The last 1–3 bytes as one zero-padded word: h0 = imul(h0 ^ tail, K2); h0 ^= h0 >>> 13.
  get(LENGTH);
  constant(3);
  emit(OP.i32And, OP.if, EMPTY_BLOCK);
  get(CURSOR);
  emit(OP.i32Load8U, 0, 0);
  set(X);
  get(LENGTH);
  constant(3);
  emit(OP.i32And);
  constant(1);
  emit(OP.i32Ne, OP.if, EMPTY_BLOCK);
  get(X);
  get(CURSOR);
  emit(OP.i32Load8U, 0, 1);
  constant(8);
  emit(OP.i32Shl, OP.i32Or);
  set(X);
  emit(OP.end);
  get(LENGTH);
  constant(3);
  emit(OP.i32And);
  constant(3);
  emit(OP.i32Eq, OP.if, EMPTY_BLOCK);
  get(X);
  get(CURSOR);
  emit(OP.i32Load8U, 0, 2);
  constant(16);
  emit(OP.i32Shl, OP.i32Or);
  set(X);
  emit(OP.end);
  get(H0);
  get(X);
  emit(OP.i32Xor);
  constant(K2);
  emit(OP.i32Mul);
  xorShift(13);
  set(H0);
  emit(OP.end);
  // finish(): fmix(h0) ^ fmix(h1·K3) ^ fmix(h2·K1) ^ fmix(h3·K2), then two more xor-shift-multiplies.
  get(H0);
  fmix();
  get(H1);
  constant(K3);
  emit(OP.i32Mul);
  fmix();
  emit(OP.i32Xor);
  get(H2);
  constant(K1);
  emit(OP.i32Mul);
  fmix();
  emit(OP.i32Xor);
  get(H3);
  constant(K2);
  emit(OP.i32Mul);
  fmix();
  emit(OP.i32Xor);
  xorShift(16);
  constant(K1);
  emit(OP.i32Mul);
  xorShift(15);
  emit(OP.end);

  const body = [...unsignedLeb(1), EXTRA_LOCALS, I32, ...code];
  const name = (text: string): number[] => [...unsignedLeb(text.length), ...new TextEncoder().encode(text)];
  const section = (id: number, bytes: readonly number[]): number[] => [
    id,
    ...unsignedLeb(bytes.length),
    ...bytes,
  ];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00], // "\0asm", version 1
    ...section(1, [1, 0x60, 2, I32, I32, 1, I32]), // type 0: (i32, i32) → i32
    // import env.memory: shared, 1 to 65 536 pages (every ring's memory fits)
    ...section(2, [
      1,
      ...name('env'),
      ...name('memory'),
      0x02,
      0x03,
      ...unsignedLeb(1),
      ...unsignedLeb(MAX_PAGES),
    ]),
    ...section(3, [1, 0]), // function 0 has type 0
    ...section(7, [1, ...name('checksum'), 0x00, 0]), // export it
    ...section(10, [1, ...unsignedLeb(body.length), ...body]),
  ]);
}

function unsignedLeb(value: number): number[] {
  const bytes: number[] = [];
  let rest = value >>> 0;
  do {
    let byte = rest & 0x7f;
    rest >>>= 7;
    if (rest !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (rest !== 0);
  return bytes;
}

function signedLeb(value: number): number[] {
  const bytes: number[] = [];
  let rest = value | 0;
  for (;;) {
    const byte = rest & 0x7f;
    rest >>= 7;
    if ((rest === 0 && (byte & 0x40) === 0) || (rest === -1 && (byte & 0x40) !== 0)) {
      bytes.push(byte);
      return bytes;
    }
    bytes.push(byte | 0x80);
  }
}
