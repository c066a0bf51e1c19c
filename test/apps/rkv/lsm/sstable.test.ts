/**
 * One SSTable, written by TableWriter and read by TableReader: every entry comes back by point
 * read (values and tombstones with their sequence numbers), absent keys are absent, a cursor walks
 * all entries in order and seeks to the first key ≥ any target, across block sizes from tiny
 * (one entry per block) to large, with empty keys, long shared prefixes and large values. The
 * written file is published by rename (no .tmp left), and the format's constants hold.
 */

import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';
import { RESTART_INTERVAL } from '../../../../src/apps/rkv/lsm/block.ts';
import { bloomHash } from '../../../../src/apps/rkv/lsm/bloom.ts';
import {
  compareKeys,
  type LsmEntry,
  MemoryFileSystem,
  NodeFileSystem,
  TableReader,
} from '../../../../src/apps/rkv/lsm/index.ts';
import { FOOTER_BYTES, TABLE_MAGIC, tableFileName } from '../../../../src/apps/rkv/lsm/table-format.ts';
import { TableWriter } from '../../../../src/apps/rkv/lsm/table-writer.ts';
import { hex, tempDirectory, throwsLsm } from './helpers.ts';

function describe(entry: LsmEntry | undefined): string {
  if (entry === undefined) return 'absent';
  return entry.kind === 'put' ? `put@${entry.sequence}:${hex(entry.value)}` : `tombstone@${entry.sequence}`;
}

/** Unique sorted entries from arbitrary generated ones. */
function normalise(
  raw: { key: Uint8Array; value: Uint8Array; tombstone: boolean; sequence: number }[],
): LsmEntry[] {
  const byKey = new Map<string, LsmEntry>();
  for (const r of raw) {
    byKey.set(
      hex(r.key),
      r.tombstone
        ? { kind: 'tombstone', key: r.key, sequence: r.sequence }
        : { kind: 'put', key: r.key, sequence: r.sequence, value: r.value },
    );
  }
  return [...byKey.values()].sort((a, b) => compareKeys(a.key, b.key));
}

const entryArb = fc.record({
  // Shared prefixes exercise the prefix compression; empty keys the edge of it.
  key: fc.oneof(
    fc.uint8Array({ maxLength: 3 }),
    fc.uint8Array({ maxLength: 6 }).map((tail) => Uint8Array.from([7, 7, 7, 7, 7, 7, 7, 7, ...tail])),
  ),
  value: fc.oneof(fc.uint8Array({ maxLength: 16 }), fc.uint8Array({ minLength: 300, maxLength: 900 })),
  tombstone: fc.boolean(),
  sequence: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constant(Number.MAX_SAFE_INTEGER)),
});

function writeTable(
  fs: MemoryFileSystem | NodeFileSystem,
  directory: string,
  entries: readonly LsmEntry[],
  blockBytes: number,
) {
  const writer = new TableWriter(fs, `${directory}/${tableFileName(1)}`, 1, {
    blockBytes,
    bloomBitsPerKey: 10,
  });
  for (const entry of entries) writer.add(entry);
  return writer.finish();
}

test('write then read: point reads, absent keys, full walk and seeks agree with the input', () => {
  const numRuns = 80;
  // Runs whose table has a block of more than RESTART_INTERVAL (16) entries — proved by
  // pigeonhole from the entry and block counts — so lookups binary-search several restarts.
  let restartRuns = 0;
  let multiBlockRuns = 0;
  fc.assert(
    fc.property(
      // size 'max': at fast-check's default size a table has at most 10 entries, and no block
      // ever reaches a second restart point.
      fc.array(entryArb, { minLength: 1, maxLength: 120, size: 'max' }),
      fc.array(fc.uint8Array({ maxLength: 10 }), { maxLength: 20, size: 'max' }),
      fc.constantFrom(256, 512, 4096),
      (raw, probes, blockBytes) => {
        const entries = normalise(raw);
        const fs = new MemoryFileSystem();
        fs.makeDirectory('/t');
        const info = writeTable(fs, '/t', entries, blockBytes);
        assert.equal(info.entryCount, entries.length);
        assert.equal(hex(info.smallestKey), hex(entries[0]!.key));
        assert.equal(hex(info.largestKey), hex(entries.at(-1)!.key));
        const reader = TableReader.open(fs, `/t/${tableFileName(1)}`, 1, { expected: info, verifyAll: true });
        if (entries.length > RESTART_INTERVAL * reader.dataBlockCount) restartRuns++;
        if (reader.dataBlockCount >= 2) multiBlockRuns++;
        const hash = { h1: 0, h2: 0 };
        for (const entry of entries) {
          assert.equal(describe(reader.get(entry.key, bloomHash(entry.key, hash))), describe(entry));
        }
        const present = new Set(entries.map((e) => hex(e.key)));
        for (const probe of probes) {
          if (!present.has(hex(probe))) assert.equal(reader.get(probe, bloomHash(probe, hash)), undefined);
        }
        const cursor = reader.cursor({ fillCache: false });
        const walked: string[] = [];
        for (cursor.seekToFirst(); cursor.valid; cursor.next())
          walked.push(`${hex(cursor.key)}=${describe(cursor.entry())}`);
        assert.deepEqual(
          walked,
          entries.map((e) => `${hex(e.key)}=${describe(e)}`),
        );
        for (const probe of probes) {
          cursor.seek(probe);
          const expected = entries.find((e) => compareKeys(e.key, probe) >= 0);
          assert.equal(
            cursor.valid ? hex(cursor.key) : 'end',
            expected === undefined ? 'end' : hex(expected.key),
          );
        }
        cursor.close();
        reader.unref();
      },
    ),
    { numRuns },
  );
  assert.ok(
    restartRuns >= numRuns / 20,
    `only ${restartRuns} of ${numRuns} tables had a block past one restart`,
  );
  assert.ok(multiBlockRuns >= numRuns / 2, `only ${multiBlockRuns} of ${numRuns} tables had two blocks`);
});

test('a table on real disk: published by rename, footer magic at the end, no temp file left', () => {
  const directory = tempDirectory();
  try {
    const entries: LsmEntry[] = [];
    for (let i = 0; i < 2000; i++) {
      const key = new TextEncoder().encode(`key-${String(i).padStart(6, '0')}`);
      entries.push(
        i % 10 === 0
          ? { kind: 'tombstone', key, sequence: i + 1 }
          : { kind: 'put', key, sequence: i + 1, value: key },
      );
    }
    const fs = new NodeFileSystem();
    const info = writeTable(fs, directory.path, entries, 4096);
    assert.deepEqual(readdirSync(directory.path), [tableFileName(1)]);
    const bytes = readFileSync(`${directory.path}/${tableFileName(1)}`);
    assert.equal(bytes.length, info.sizeBytes);
    assert.deepEqual(
      [...bytes.subarray(bytes.length - FOOTER_BYTES, bytes.length - FOOTER_BYTES + 8)],
      [...TABLE_MAGIC],
    );
    assert.equal(info.tombstoneCount, 200);
    const reader = TableReader.open(fs, `${directory.path}/${tableFileName(1)}`, 1, { expected: info });
    assert.ok(reader.dataBlockCount > 5);
    reader.unref();
  } finally {
    directory.remove();
  }
});

test('keys out of order are refused while writing (a damaged memtable is not persisted)', () => {
  const fs = new MemoryFileSystem();
  fs.makeDirectory('/t');
  const writer = new TableWriter(fs, `/t/${tableFileName(1)}`, 1, { blockBytes: 4096, bloomBitsPerKey: 10 });
  writer.add({ kind: 'put', key: Uint8Array.of(2), sequence: 1, value: Uint8Array.of(0) });
  throwsLsm(
    () => writer.add({ kind: 'put', key: Uint8Array.of(1), sequence: 2, value: Uint8Array.of(0) }),
    'IPIPE_ERR_LSM_UNSORTED_INPUT',
  );
  throwsLsm(
    () => writer.add({ kind: 'put', key: Uint8Array.of(2), sequence: 3, value: Uint8Array.of(0) }),
    'IPIPE_ERR_LSM_UNSORTED_INPUT',
  );
  writer.abandon();
  assert.deepEqual(fs.list('/t'), []);
});
