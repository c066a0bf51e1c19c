/**
 * Typed views over one DMO domain's buffer, made once and shared by every heap and collection of
 * the domain (the "fast address translation" half of iPipe §3's DMO overhead: once the object
 * table says where an object starts, access is a typed-array load with no per-call allocation).
 */

/**
 * The buffer a domain lives in: a SharedArrayBuffer wherever the runtime has one (also for a
 * domain that is not shared; see `DmoDomain.create`), else an ArrayBuffer.
 */
export type DomainBuffer = ArrayBuffer | SharedArrayBuffer;

/** The views every accessor uses. Numbers in DMOs are little-endian (see layout.ts). */
export interface DomainMemory {
  readonly buffer: DomainBuffer;
  /**
   * Other threads may hold views of the buffer, so allocator metadata changes take locks. Set by
   * the domain's options (recorded in its header), not by the buffer's type.
   */
  readonly shared: boolean;
  readonly u8: Uint8Array;
  readonly u32: Uint32Array;
  readonly i32: Int32Array;
  readonly f64: Float64Array;
  /** For unaligned or explicitly little-endian reads of object fields. */
  readonly view: DataView;
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

/** Makes the views over `buffer` (once per domain object); `shared` as in DomainMemory. */
export function createDomainMemory(buffer: DomainBuffer, shared: boolean): DomainMemory {
  if (!LITTLE_ENDIAN) {
    // Metadata goes through native-order typed arrays and object fields through little-endian
    // DataView calls; on a big-endian CPU the two would disagree.
    throw new Error('ipipe DMOs need a little-endian CPU');
  }
  return {
    buffer,
    shared,
    u8: new Uint8Array(buffer),
    u32: new Uint32Array(buffer),
    i32: new Int32Array(buffer),
    f64: new Float64Array(buffer),
    view: new DataView(buffer),
  };
}
