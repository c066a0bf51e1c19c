/**
 * Shared helpers for the DMO tests: small domains, a typed-error assertion, byte helpers.
 */

import assert from 'node:assert/strict';
import { DmoDomain, type DmoDomainOptions } from '../../src/dmo/index.ts';
import { type ErrorCode, isIpipeError } from '../../src/errors.ts';
import { type ActorId, actorId } from '../../src/ids.ts';

export const A: ActorId = actorId(1);
export const B: ActorId = actorId(2);

export function makeDomain(options: Partial<DmoDomainOptions> = {}): DmoDomain {
  return DmoDomain.create({ regionBytes: 64 * 1024, maxActors: 4, ...options });
}

/** Asserts that `fn` throws an IpipeError with `code`. */
export function throwsCode(fn: () => unknown, code: ErrorCode, message?: string): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(isIpipeError(error), `expected an IpipeError, got ${String(error)}`);
    assert.equal(error.code, code, message);
    return true;
  });
}

const encoder = new TextEncoder();
export function bytes(text: string): Uint8Array<ArrayBuffer> {
  return encoder.encode(text);
}

/** Hex of a byte array, for readable model keys. */
export function hex(value: Uint8Array): string {
  let out = '';
  for (const byte of value) out += byte.toString(16).padStart(2, '0');
  return out;
}

/** Unsigned lexicographic comparison, the order the skip list promises. */
export function compareKeys(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
