/**
 * The ring's record checksum (word-checksum.ts) compiled to WebAssembly, for rings whose memory is
 * a shared `WebAssembly.Memory` (iPipe §3 "Host–NIC messaging": a checksum on every message, paid
 * twice per message — sealed by the producer, verified by the consumer).
 *
 * Why. The hash's 32 vector lanes are eight `i32x4` accumulators here: one `i32x4.mul` multiplies
 * four words, and eight independent accumulators keep eight of its ~10-cycle multiplies in flight,
 * so 1 KiB costs ~70 ns against ~145 for the four-lane scalar hash this replaced (layout version 2;
 * docs/ring-throughput.md "Fourth pass"). A WebAssembly load is one instruction (bounds are checked
 * by guard pages) where a JavaScript `Int32Array` load is ~8. The function is the same, bit for
 * bit, as `ringChecksum`: a ring side that has only the `SharedArrayBuffer` (an older caller that
 * posted `ring.buffer`, or an engine that refused shared WebAssembly memory) uses the JavaScript
 * version, and the two sides still agree (test/platform/live/word-checksum-wasm.test.ts compares
 * them at every length 0–400 and at random lengths up to 4 KiB). An engine without SIMD fails to
 * compile the module, and the ring falls back to JavaScript the same way.
 *
 * The module is assembled here from named opcodes rather than shipped as a binary, so it can be
 * read next to the JavaScript it mirrors; it is compiled once per thread, and instantiated once per
 * ring side over that ring's memory.
 */

import {
  RING_CHECKSUM_LANES,
  RING_CHECKSUM_MULTIPLIERS,
  RING_CHECKSUM_ROTATIONS,
  RING_CHECKSUM_SEEDS,
  RING_CHECKSUM_SHIFT,
  SEED_ONLY_VECTOR_PART,
  UPPER_HALF_OF_SEED_ROOTS,
} from './word-checksum.ts';

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

/** The scalar lane's and the finish's constants, as in word-checksum.ts. */
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
  else: 0x05,
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
} as const;
/** SIMD instructions: the 0xfd prefix, then the opcode as unsigned LEB128. */
const SIMD = {
  v128Load: 0x00,
  v128Const: 0x0c,
  i32x4ExtractLane: 0x1b,
  v128Or: 0x50,
  v128Xor: 0x51,
  i32x4Shl: 0xab,
  i32x4ShrU: 0xad,
  i32x4Mul: 0xb5,
} as const;
const EMPTY_BLOCK = 0x40;
const I32 = 0x7f;
const V128 = 0x7b;

// Locals: the two parameters; four i32 (cursor, an end mark, the scalar lane, a scratch value);
// then v128: the eight accumulators, a scratch vector and the step's multipliers.
const START = 0;
const LENGTH = 1;
const CURSOR = 2;
const END = 3;
const SCALAR = 4;
const X = 5;
const ACCUMULATOR = 6; // 6..13
const XV = 14;
const STEP_MULTIPLIERS = 15;
const I32_LOCALS = 4;
const V128_LOCALS = 10;
const ACCUMULATORS = RING_CHECKSUM_LANES / 4;

function assembleChecksumModule(): Uint8Array {
  const code: number[] = [];
  const emit = (...bytes: number[]): void => {
    for (const byte of bytes) code.push(byte);
  };
  const simd = (op: number, ...immediates: number[]): void => emit(0xfd, ...unsignedLeb(op), ...immediates);
  const get = (local: number): void => emit(OP.localGet, local);
  const set = (local: number): void => emit(OP.localSet, local);
  const constant = (value: number): void => emit(OP.i32Const, ...signedLeb(value));
  const vectorConstant = (lanes: readonly number[]): void => {
    const bytes = new Uint8Array(16);
    const view = new DataView(bytes.buffer);
    for (let lane = 0; lane < 4; lane++) view.setInt32(lane * 4, lanes[lane]!, true);
    simd(SIMD.v128Const, ...bytes);
  };
  /** A_k = imul(x ^ (x >>> 15), K) with x = A_k ^ the vector at cursor + offset: one step of four lanes. */
  const step = (accumulator: number, offset: number): void => {
    get(ACCUMULATOR + accumulator);
    get(CURSOR);
    simd(SIMD.v128Load, 0, ...unsignedLeb(offset)); // alignment hint 2^0: records are 8-byte aligned
    simd(SIMD.v128Xor);
    vectorXorShift(RING_CHECKSUM_SHIFT);
    get(STEP_MULTIPLIERS);
    simd(SIMD.i32x4Mul);
    set(ACCUMULATOR + accumulator);
  };
  /** x ^= x >>> shift on the vector on the stack (through XV). */
  const vectorXorShift = (shift: number): void => {
    emit(OP.localTee, XV);
    get(XV);
    constant(shift);
    simd(SIMD.i32x4ShrU);
    simd(SIMD.v128Xor);
  };
  /** rotl(A_k, the rotation of accumulator k), lane by lane, onto the stack (SIMD has no rotate). */
  const rotatedLanes = (accumulator: number): void => {
    const bits = RING_CHECKSUM_ROTATIONS[accumulator]!;
    get(ACCUMULATOR + accumulator);
    if (bits === 0) return;
    constant(bits);
    simd(SIMD.i32x4Shl);
    get(ACCUMULATOR + accumulator);
    constant(32 - bits);
    simd(SIMD.i32x4ShrU);
    simd(SIMD.v128Or);
  };
  /** The XOR of four accumulators' rotated lanes onto the stack, as a tree (two XORs deep, not three). */
  const rootsOf = (first: number): void => {
    rotatedLanes(first);
    rotatedLanes(first + 1);
    simd(SIMD.v128Xor);
    rotatedLanes(first + 2);
    rotatedLanes(first + 3);
    simd(SIMD.v128Xor);
    simd(SIMD.v128Xor);
  };
  /** x ^= x >>> shift on the i32 on the stack (through X). */
  const xorShift = (shift: number): void => {
    emit(OP.localTee, X);
    get(X);
    constant(shift);
    emit(OP.i32ShrU, OP.i32Xor);
  };
  /** fmix (word-checksum.ts) of the i32 on the stack. */
  const fmix = (): void => {
    xorShift(16);
    constant(K2);
    emit(OP.i32Mul);
    xorShift(13);
    constant(K3);
    emit(OP.i32Mul);
    xorShift(16);
  };
  /** SCALAR = imul(x ^ (x >>> 15), K2) with x = SCALAR ^ the i32 on the stack. */
  const scalarStep = (): void => {
    get(SCALAR);
    emit(OP.i32Xor);
    xorShift(RING_CHECKSUM_SHIFT);
    constant(K2);
    emit(OP.i32Mul);
    set(SCALAR);
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

  const seed = (accumulator: number): void => {
    vectorConstant([...RING_CHECKSUM_SEEDS.subarray(accumulator * 4, accumulator * 4 + 4)]);
    set(ACCUMULATOR + accumulator);
  };
  // Accumulators 4–7 only for records of 128 bytes or more: a constant costs four instructions.
  for (let accumulator = 0; accumulator < 4; accumulator++) seed(accumulator);
  get(LENGTH);
  constant(~127);
  emit(OP.i32And, OP.if, EMPTY_BLOCK);
  for (let accumulator = 4; accumulator < ACCUMULATORS; accumulator++) seed(accumulator);
  emit(OP.end);
  vectorConstant(RING_CHECKSUM_MULTIPLIERS);
  set(STEP_MULTIPLIERS);
  // 128-byte blocks: vector k of a block to accumulator k.
  get(START);
  set(CURSOR);
  get(START);
  get(LENGTH);
  constant(~127);
  emit(OP.i32And, OP.i32Add);
  set(END);
  loopToEnd(128, () => {
    for (let accumulator = 0; accumulator < ACCUMULATORS; accumulator++) step(accumulator, accumulator * 16);
  });
  // Then a 64-byte part to accumulators 0–3, a 32-byte part to 0–1, a 16-byte part to 0.
  for (const partBytes of [64, 32, 16]) {
    get(LENGTH);
    constant(partBytes);
    emit(OP.i32And, OP.if, EMPTY_BLOCK);
    for (let accumulator = 0; accumulator < partBytes / 16; accumulator++)
      step(accumulator, accumulator * 16);
    get(CURSOR);
    constant(partBytes);
    emit(OP.i32Add);
    set(CURSOR);
    emit(OP.end);
  }
  // The scalar lane: seeded with the length, then up to three words, then the 1–3 byte tail.
  get(LENGTH);
  constant(K4);
  emit(OP.i32Xor);
  constant(K2);
  emit(OP.i32Mul);
  set(SCALAR);
  get(CURSOR);
  get(LENGTH);
  constant(12);
  emit(OP.i32And, OP.i32Add);
  set(END);
  loopToEnd(4, () => {
    get(CURSOR);
    emit(OP.i32Load, 2, 0);
    scalarStep();
  });
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
  get(X);
  scalarStep();
  emit(OP.end);
  // The roots, all four positions at once: each accumulator rotated by its own amount, XORed.
  // Below 16 bytes every lane holds its seed and the whole vector part is a constant; below 128
  // bytes accumulators 4–7 do, and their part is (computed once, in word-checksum.ts).
  get(LENGTH);
  constant(~15);
  emit(OP.i32And, OP.if, I32);
  rootsOf(0);
  get(LENGTH);
  constant(~127);
  emit(OP.i32And, OP.if, V128);
  rootsOf(4);
  emit(OP.else);
  vectorConstant([...UPPER_HALF_OF_SEED_ROOTS]);
  emit(OP.end);
  simd(SIMD.v128Xor);
  set(XV);
  // fmix of each root as four scalar chains side by side: a vector fmix would be two ~10-cycle
  // vector multiplies deep, and the producer waits for the seal.
  for (let lane = 0; lane < 4; lane++) {
    get(XV);
    simd(SIMD.i32x4ExtractLane, lane);
    fmix();
    if (lane > 0) emit(OP.i32Xor);
  }
  emit(OP.else);
  constant(SEED_ONLY_VECTOR_PART);
  emit(OP.end);
  // XOR fmix(scalar lane), then the last mix.
  get(SCALAR);
  fmix();
  emit(OP.i32Xor);
  xorShift(16);
  constant(K1);
  emit(OP.i32Mul);
  xorShift(15);
  emit(OP.end);

  const body = [...unsignedLeb(2), I32_LOCALS, I32, V128_LOCALS, V128, ...code];
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
