/**
 * RKV's LSM storage engine (iPipe §5 "The applications", RKV: skip-list memtable in DMOs on the
 * NIC, SSTables with Bloom filters on the host, minor and major compaction), each figure measured
 * against a baseline in the same run:
 *
 *   memtable put / get     PlainMemtable and DmoMemtable (the DMO skip list) vs a JS Map with
 *                          string keys (pre-built: Map's best case) and vs a sorted array of the
 *                          same Uint8Array keys (binary search; insert by splice)
 *   SSTable point reads    LsmTree.get on real files, hits and misses, with the block cache warm
 *                          and without it, with and without Bloom filters (10 bits/key vs none),
 *                          vs a binary search over the same keys held in a JS array
 *   flush / compaction     memtable → level-0 table, and a full compaction of level 0 into the
 *                          last level, in MB/s of table bytes written, vs writing the same
 *                          number of bytes to one file (64 KiB writes + fsync) — the disk's pace
 *
 * Keys are 16 random bytes from a seeded generator (seed printed), values 100 bytes. Timed blocks
 * alternate engine and baseline for several rounds; figures are medians. Files go to a fresh
 * directory under the OS temp dir (removed at the end); on a 2-core shared machine the MB/s swing
 * with other load, so read the ratios.
 *
 * Run: `npx tsx bench/lsm.bench.ts` (or `npm run bench -- lsm`); `runLsmBench()` returns the rows.
 */

import { closeSync, fsyncSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { DmoMemtable, LsmTree, type Memtable, PlainMemtable } from '../src/apps/rkv/lsm/index.ts';
import { DmoDomain } from '../src/dmo/index.ts';
import { actorId } from '../src/ids.ts';
import { type BenchRow, printRows } from './report.ts';
import { compareBytes, median, xorshift32 } from './support.ts';

/** Options of `runLsmBench`. */
export interface LsmBenchOptions {
  /** Keys in the memtable and read tests (default 50 000). */
  readonly entries?: number;
  /** Seed of the key generator (default 0x5eed1a5). */
  readonly seed?: number;
  /** Timed rounds per comparison (default 5). */
  readonly rounds?: number;
  /** Progress lines (default: stderr). */
  readonly log?: (line: string) => void;
}

const KEY_BYTES = 16;
const VALUE_BYTES = 100;
/** Results go here so the optimiser cannot drop the measured work. */
let sink = 0;

function randomKeys(count: number, next: () => number): Uint8Array[] {
  const keys: Uint8Array[] = [];
  for (let i = 0; i < count; i++) {
    const key = new Uint8Array(KEY_BYTES);
    for (let b = 0; b < KEY_BYTES; b += 4) {
      const word = next();
      key[b] = word;
      key[b + 1] = word >>> 8;
      key[b + 2] = word >>> 16;
      key[b + 3] = word >>> 24;
    }
    keys.push(key);
  }
  return keys;
}

function latin1(bytes: Uint8Array): string {
  return String.fromCharCode(...bytes);
}

/** Binary search over sorted keys: the in-memory baseline for point reads. */
function lowerBound(keys: readonly Uint8Array[], key: Uint8Array): number {
  let low = 0;
  let high = keys.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (compareBytes(keys[middle]!, key) < 0) low = middle + 1;
    else high = middle;
  }
  return low;
}

/** Times `engine` and `baseline` alternately; returns median ns per op of each and of their ratio. */
function compare(
  engine: () => number,
  baseline: () => number,
  rounds: number,
  beforeEngine: () => void = () => {},
): { engineNs: number; baselineNs: number; ratio: number } {
  beforeEngine();
  engine();
  baseline();
  const engineNs: number[] = [];
  const baselineNs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    beforeEngine(); // untimed set-up (freeing the previous round's memtable)
    let start = performance.now();
    const engineOps = engine();
    const engineMs = performance.now() - start;
    start = performance.now();
    const baselineOps = baseline();
    const baselineMs = performance.now() - start;
    engineNs.push((engineMs * 1e6) / engineOps);
    baselineNs.push((baselineMs * 1e6) / baselineOps);
    ratios.push((engineMs * 1e6) / engineOps / ((baselineMs * 1e6) / baselineOps));
  }
  return { engineNs: median(engineNs), baselineNs: median(baselineNs), ratio: median(ratios) };
}

function memtableRows(keys: readonly Uint8Array[], value: Uint8Array, rounds: number): BenchRow[] {
  const strings = keys.map(latin1);
  // One heap for every DMO memtable: each round's memtable is destroyed (untimed) before the next.
  const heap = DmoDomain.create({ regionBytes: 64 << 20, maxActors: 1 }).createHeap(actorId(1));
  const makers: [string, () => Memtable][] = [
    ['PlainMemtable', () => new PlainMemtable()],
    ['DmoMemtable', () => DmoMemtable.create(heap)],
  ];
  const rows: BenchRow[] = [];
  const sorted = [...keys].sort(compareBytes);
  for (const [name, make] of makers) {
    let filled: Memtable | undefined;
    const release = (): void => {
      filled?.destroy();
      filled = undefined;
    };
    const fill = (): number => {
      const memtable = make();
      for (let i = 0; i < keys.length; i++) memtable.put(keys[i]!, value, i + 1);
      filled = memtable;
      return keys.length;
    };
    const mapFill = (): number => {
      const map = new Map<string, Uint8Array>();
      for (let i = 0; i < strings.length; i++) map.set(strings[i]!, value);
      sink += map.size;
      return strings.length;
    };
    const put = compare(fill, mapFill, rounds, release);
    const sortedFill = (): number => {
      const arrayKeys: Uint8Array[] = [];
      const arrayValues: Uint8Array[] = [];
      for (const key of keys) {
        const at = lowerBound(arrayKeys, key);
        arrayKeys.splice(at, 0, key);
        arrayValues.splice(at, 0, value);
      }
      sink += arrayKeys.length;
      return keys.length;
    };
    const putSorted = compare(fill, sortedFill, Math.min(rounds, 3), release);
    const memtable = filled!;
    const get = (): number => {
      for (const key of keys) {
        const entry = memtable.get(key);
        if (entry?.kind === 'put') sink += entry.value.length;
      }
      return keys.length;
    };
    const map = new Map<string, Uint8Array>();
    for (const key of strings) map.set(key, value);
    const mapGet = (): number => {
      for (const key of strings) sink += map.get(key)?.length ?? 0;
      return strings.length;
    };
    const sortedGet = (): number => {
      for (const key of keys) sink += lowerBound(sorted, key);
      return keys.length;
    };
    const getMap = compare(get, mapGet, rounds);
    const getSorted = compare(get, sortedGet, rounds);
    const opsPerSec = (ns: number) => 1e9 / ns / 1e6;
    rows.push(
      {
        section: 'memtable',
        name: `${name} put (${keys.length} keys)`,
        value: opsPerSec(put.engineNs),
        unit: 'M ops/s',
        ratio: 1 / put.ratio,
        baseline: `Map.set ${opsPerSec(put.baselineNs).toFixed(2)} M/s`,
      },
      {
        section: 'memtable',
        name: `${name} put`,
        value: opsPerSec(putSorted.engineNs),
        unit: 'M ops/s',
        ratio: 1 / putSorted.ratio,
        baseline: `sorted array ${opsPerSec(putSorted.baselineNs).toFixed(2)} M/s`,
      },
      {
        section: 'memtable',
        name: `${name} get`,
        value: opsPerSec(getMap.engineNs),
        unit: 'M ops/s',
        ratio: 1 / getMap.ratio,
        baseline: `Map.get ${opsPerSec(getMap.baselineNs).toFixed(2)} M/s`,
      },
      {
        section: 'memtable',
        name: `${name} get`,
        value: opsPerSec(getSorted.engineNs),
        unit: 'M ops/s',
        ratio: 1 / getSorted.ratio,
        baseline: `sorted array ${opsPerSec(getSorted.baselineNs).toFixed(2)} M/s`,
      },
    );
    filled?.destroy();
  }
  return rows;
}

/** Level 0 of `tables` overlapping tables (every table spans the whole key space) in `directory`. */
function buildTree(
  directory: string,
  keys: readonly Uint8Array[],
  value: Uint8Array,
  tables: number,
  bloomBitsPerKey: number,
  blockCacheBytes: number,
): LsmTree {
  const tree = LsmTree.open({
    directory,
    bloomBitsPerKey,
    blockCacheBytes,
    level0CompactionTrigger: 64,
    targetTableBytes: 64 << 20,
  });
  for (let t = 0; t < tables; t++) {
    const memtable = new PlainMemtable();
    for (let i = t; i < keys.length; i += tables) memtable.put(keys[i]!, value, i + 1);
    tree.flush(memtable);
    memtable.destroy();
  }
  return tree;
}

function readRows(root: string, keys: readonly Uint8Array[], value: Uint8Array, rounds: number): BenchRow[] {
  const tables = 8;
  const hits = keys.slice(0, 5_000);
  // Misses inside the tables' key range: only the Bloom filter (or a block read) rules them out.
  const misses = randomKeys(5_000, xorshift32(0xbad5eed));
  const sorted = [...keys].sort(compareBytes);
  const baselineHit = (): number => {
    for (const key of hits) sink += lowerBound(sorted, key);
    return hits.length;
  };
  const rows: BenchRow[] = [];
  for (const [label, bloom, cache] of [
    ['bloom 10 bits/key, cache warm', 10, 64 << 20],
    ['bloom 10 bits/key, no block cache', 10, 0],
    ['no bloom filter, cache warm', 0, 64 << 20],
    ['no bloom filter, no block cache', 0, 0],
  ] as const) {
    const directory = join(root, `read-${bloom}-${cache}`);
    const tree = buildTree(directory, keys, value, tables, bloom, cache);
    try {
      const hit = (): number => {
        for (const key of hits) {
          const entry = tree.get(key);
          if (entry?.kind === 'put') sink += entry.value.length;
        }
        return hits.length;
      };
      const miss = (): number => {
        for (const key of misses) if (tree.get(key) !== undefined) sink++;
        return misses.length;
      };
      const hitResult = compare(hit, baselineHit, rounds);
      const before = tree.stats();
      const missResult = compare(miss, baselineHit, rounds);
      const after = tree.stats();
      // Tables skipped per missing key by their Bloom filter (of `tables` whose range holds it).
      const negatives = (after.bloomNegatives - before.bloomNegatives) / (after.gets - before.gets);
      rows.push(
        {
          section: 'sstable get',
          name: `hit, ${label} (${tables} L0 tables)`,
          value: hitResult.engineNs / 1000,
          unit: 'µs/op',
          ratio: hitResult.ratio,
          baseline: `binary search in memory ${hitResult.baselineNs.toFixed(0)} ns`,
        },
        {
          section: 'sstable get',
          name: `miss, ${label}`,
          value: missResult.engineNs / 1000,
          unit: 'µs/op',
          ratio: missResult.ratio,
          baseline: 'same',
          note: `filter ruled out ${negatives.toFixed(2)} of ${tables} tables per get`,
        },
      );
    } finally {
      tree.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }
  return rows;
}

/** MB/s of writing `bytes` to one file in 64 KiB writes, then fsync: the disk's own pace. */
function rawWriteMbPerSec(directory: string, bytes: number): number {
  const chunk = new Uint8Array(64 << 10).fill(0x5a);
  const path = join(directory, 'raw.bin');
  const start = performance.now();
  const fd = openSync(path, 'w');
  for (let written = 0; written < bytes; written += chunk.length)
    writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - written));
  fsyncSync(fd);
  closeSync(fd);
  const seconds = (performance.now() - start) / 1000;
  rmSync(path);
  return bytes / 1e6 / seconds;
}

function compactionRows(
  root: string,
  keys: readonly Uint8Array[],
  value: Uint8Array,
  rounds: number,
): BenchRow[] {
  const flushMbs: number[] = [];
  const compactMbs: number[] = [];
  const compactInMbs: number[] = [];
  const rawMbs: number[] = [];
  let tableBytes = 0;
  for (let round = 0; round < rounds; round++) {
    const directory = join(root, `compact-${round}`);
    const tree = LsmTree.open({
      directory,
      level0CompactionTrigger: 64,
      targetTableBytes: 8 << 20,
      levelCount: 3,
    });
    try {
      // Four overlapping level-0 tables, a quarter of them overwrites of earlier keys.
      const memtables: PlainMemtable[] = [];
      let sequence = 0;
      for (let t = 0; t < 4; t++) {
        const memtable = new PlainMemtable();
        for (let i = 0; i < keys.length; i++)
          if (i % 4 === t || i % 16 === 0) memtable.put(keys[i]!, value, ++sequence);
        memtables.push(memtable);
      }
      let start = performance.now();
      let flushed = 0;
      for (const memtable of memtables) flushed += tree.flush(memtable)?.bytesWritten ?? 0;
      flushMbs.push(flushed / 1e6 / ((performance.now() - start) / 1000));
      for (const memtable of memtables) memtable.destroy();
      start = performance.now();
      const reports = tree.compactAll();
      const seconds = (performance.now() - start) / 1000;
      const written = reports.reduce((sum, report) => sum + report.bytesWritten, 0);
      const read = reports.reduce((sum, report) => sum + report.bytesRead, 0);
      compactMbs.push(written / 1e6 / seconds);
      compactInMbs.push(read / 1e6 / seconds);
      tableBytes = written;
      rawMbs.push(rawWriteMbPerSec(directory, written));
    } finally {
      tree.close();
      rmSync(directory, { recursive: true, force: true });
    }
  }
  const raw = median(rawMbs);
  return [
    {
      section: 'compaction',
      name: `raw file write + fsync (${(tableBytes / 1e6).toFixed(1)} MB)`,
      value: raw,
      unit: 'MB/s',
    },
    {
      section: 'compaction',
      name: 'flush: memtable → L0 table (written)',
      value: median(flushMbs),
      unit: 'MB/s',
      ratio: median(flushMbs) / raw,
      baseline: 'raw write',
    },
    {
      section: 'compaction',
      name: 'compactAll: 4 L0 tables → last level (written)',
      value: median(compactMbs),
      unit: 'MB/s',
      ratio: median(compactMbs) / raw,
      baseline: 'raw write',
    },
    { section: 'compaction', name: 'compactAll (input read)', value: median(compactInMbs), unit: 'MB/s' },
  ];
}

/** Runs every LSM measurement; see the header. */
export function runLsmBench(options: LsmBenchOptions = {}): BenchRow[] {
  const entries = options.entries ?? 50_000;
  const seed = options.seed ?? 0x5eed1a5;
  const rounds = options.rounds ?? 5;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  log(
    `lsm bench: ${entries} keys of ${KEY_BYTES} B, values ${VALUE_BYTES} B, seed 0x${seed.toString(16)}, ${rounds} rounds`,
  );
  const keys = randomKeys(entries, xorshift32(seed));
  const value = new Uint8Array(VALUE_BYTES).fill(0x76);
  const root = mkdtempSync(join(tmpdir(), 'ipipe-lsm-bench-'));
  try {
    log('lsm bench: memtables');
    const rows = memtableRows(keys, value, rounds);
    log('lsm bench: point reads');
    rows.push(...readRows(root, keys, value, rounds));
    log('lsm bench: flush and compaction');
    rows.push(
      ...compactionRows(root, randomKeys(entries * 2, xorshift32(seed + 1)), value, Math.min(rounds, 3)),
    );
    if (sink === 42) log('');
    return rows;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  printRows(runLsmBench());
}
