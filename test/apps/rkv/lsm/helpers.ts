/**
 * Shared helpers for the LSM engine's tests: temp directories, a sorted-map model of the store,
 * byte helpers, a seeded generator and a typed-error assertion.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { isLsmError, type LsmEngine, type LsmErrorCode } from '../../../../src/apps/rkv/lsm/index.ts';

/**
 * The seed of every fast-check property in these files: fixed, so CI runs are reproducible; set
 * LSM_PROPERTY_SEED to explore others (a failure prints its seed and path for `fc.assert`).
 */
export const PROPERTY_SEED = Number(process.env['LSM_PROPERTY_SEED'] ?? 20261122);
fc.configureGlobal({ seed: PROPERTY_SEED });
process.stderr.write(
  `LSM property tests: fast-check seed ${PROPERTY_SEED} (set LSM_PROPERTY_SEED to change)\n`,
);

/** A fresh directory under the OS temp dir; `remove()` deletes it. */
export function tempDirectory(prefix = 'ipipe-lsm-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** Hex of bytes: model keys and readable failures. */
export function hex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
}

export function fromHex(text: string): Uint8Array {
  const bytes = new Uint8Array(text.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16);
  return bytes;
}

const encoder = new TextEncoder();
export function utf8(text: string): Uint8Array {
  return encoder.encode(text);
}

/**
 * The model: hex key → hex value. Lowercase hex strings sort exactly as their bytes do (two digits
 * per byte, '0'–'9' < 'a'–'f' in nibble order, a prefix first), so string order is key order.
 */
export type Model = Map<string, string>;

/** The model's contents in key order, as [hexKey, hexValue] pairs. */
export function sortedModel(model: Model, start?: string, end?: string): [string, string][] {
  return [...model.entries()]
    .filter(([key]) => (start === undefined || key >= start) && (end === undefined || key < end))
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** The engine's contents over a range, as [hexKey, hexValue] pairs. */
export function scanHex(engine: LsmEngine, start?: Uint8Array, end?: Uint8Array): [string, string][] {
  const out: [string, string][] = [];
  for (const [key, value] of engine.scan({
    ...(start === undefined ? {} : { start }),
    ...(end === undefined ? {} : { end }),
  })) {
    out.push([hex(key), hex(value)]);
  }
  return out;
}

/** Asserts that every model key reads back its value and the full scan equals the model. */
export function assertMatchesModel(engine: LsmEngine, model: Model, message = ''): void {
  for (const [key, value] of model) {
    const got = engine.get(fromHex(key));
    assert.ok(got !== undefined, `${message} key ${key} missing`);
    assert.equal(hex(got), value, `${message} key ${key}`);
  }
  assert.deepEqual(scanHex(engine), sortedModel(model), `${message} full scan`);
}

/** xorshift32 in [0, 1): the tests' seeded randomness. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0 || 0x9e3779b9;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state / 0x1_0000_0000;
  };
}

/** Asserts that `fn` throws an LsmError with `code`; returns the error. */
export function throwsLsm(fn: () => unknown, code: LsmErrorCode, message?: string): Error {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught !== undefined, `${message ?? ''} expected ${code}, nothing was thrown`);
  assert.ok(isLsmError(caught, code), `${message ?? ''} expected ${code}, got ${String(caught)}`);
  return caught as Error;
}

/** Small sizes so a few hundred writes make several tables and levels. */
export const SMALL_TREE = {
  memtableBytes: 2048,
  blockBytes: 256,
  targetTableBytes: 4096,
  level1MaxBytes: 8192,
  levelSizeRatio: 2,
  level0CompactionTrigger: 2,
  levelCount: 4,
} as const;
