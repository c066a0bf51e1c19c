/**
 * DMO benchmarks, each against a plain-JS baseline measured in the same run (iPipe §3 names
 * object-table address translation as one of the runtime's two main overheads; this is where we
 * see what it costs in TypeScript).
 *
 *   DmoHashMap   get / put vs Map — 16-byte keys: Uint8Array for the DMO map, the same 16 ASCII
 *                characters as a string for Map (pre-built, so Map's string hash is cached: Map's
 *                best case); 16-byte Uint8Array values on both sides (Map keeps a reference, the
 *                DMO map copies the bytes in and out). One extra baseline decodes the key bytes
 *                to a string per lookup, as an app receiving keys off the wire would.
 *   DmoNumberMap get / increment vs Map<number, number>.
 *   DmoSkipList  insert / lookup vs a sorted array (binary search + splice) of the same
 *                Uint8Array keys, compared byte-wise.
 *   Heap         checked readF64 vs a raw Float64Array read; allocate+free in a shared domain vs
 *                one that is not (the futex lock's cost); snapshot+restore throughput.
 *
 * Method: a hand-rolled loop rather than a micro-benchmark harness, because the DMO structures and
 * their baselines must be compared under the same conditions on a noisy 2-core machine. Each
 * pair warms up, then alternates a block of the DMO operation with a block of the baseline
 * (a block = one pass over all N keys) for several rounds; ns/op are medians over rounds and the
 * ratio is the median of the per-round ratios. Keys come from a seeded generator (seed printed).
 *
 * Run: `npx tsx bench/dmo.bench.ts` (prints a table); `runDmoBench()` returns the rows.
 */

import { pathToFileURL } from 'node:url';
import {
  DmoDomain,
  DmoHashMap,
  DmoNumberMap,
  DmoSkipList,
  restoreHeap,
  snapshotHeap,
} from '../src/dmo/index.ts';
import { actorId } from '../src/ids.ts';
import { compareBytes, median, xorshift32 } from './support.ts';

/** One measured comparison. */
export interface DmoBenchRow {
  readonly group: string;
  readonly operation: string;
  /** Entries in the structure while measuring (0 where it does not apply). */
  readonly entries: number;
  readonly dmoNsPerOp: number;
  readonly baseline: string;
  readonly baselineNsPerOp: number;
  /** dmoNsPerOp / baselineNsPerOp, median of per-round ratios. */
  readonly ratio: number;
}

/** Options of `runDmoBench`. */
export interface DmoBenchOptions {
  /** Structure sizes to measure at (default 10^4 and 10^5). */
  readonly sizes?: readonly number[];
  /** Seed of the key generator (default 0x1badb002). */
  readonly seed?: number;
  /** Rounds per comparison (default 7; the 10^5 sorted-array build uses at most 3). */
  readonly rounds?: number;
  /** Progress lines go here (default: nowhere). */
  readonly log?: (line: string) => void;
}

const KEY_BYTES = 16;
const KEY_ALPHABET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const encoder = new TextEncoder();
const decoder = new TextDecoder();
/** Results are summed into this so the optimiser cannot drop the measured work. */
let sink = 0;

interface Keys {
  readonly strings: string[];
  readonly bytes: Uint8Array[];
}

function makeKeys(count: number, next: () => number): Keys {
  const strings: string[] = [];
  const seen = new Set<string>();
  while (strings.length < count) {
    let key = '';
    for (let i = 0; i < KEY_BYTES; i++) key += KEY_ALPHABET[next() % KEY_ALPHABET.length];
    if (seen.has(key)) continue;
    seen.add(key);
    strings.push(key);
  }
  return { strings, bytes: strings.map((key) => encoder.encode(key)) };
}

/**
 * Times `dmo` and `baseline` blocks alternately. Each block performs `opsPerBlock` operations.
 * Warm-up runs both until `warmupMs` has passed (at least twice each).
 */
function comparePair(
  dmo: () => void,
  baseline: () => void,
  opsPerBlock: number,
  rounds: number,
  warmupMs = 150,
): { dmoNs: number; baselineNs: number; ratio: number } {
  const warmupEnd = performance.now() + warmupMs;
  for (let i = 0; i < 2 || performance.now() < warmupEnd; i++) {
    dmo();
    baseline();
  }
  const dmoNs: number[] = [];
  const baselineNs: number[] = [];
  const ratios: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let start = performance.now();
    dmo();
    const dmoMs = performance.now() - start;
    start = performance.now();
    baseline();
    const baselineMs = performance.now() - start;
    dmoNs.push((dmoMs * 1e6) / opsPerBlock);
    baselineNs.push((baselineMs * 1e6) / opsPerBlock);
    ratios.push(dmoMs / baselineMs);
  }
  return { dmoNs: median(dmoNs), baselineNs: median(baselineNs), ratio: median(ratios) };
}

/** The sorted-array baseline for the skip list: parallel key/value arrays, binary search. */
class SortedArrayMap {
  readonly keys: Uint8Array[] = [];
  readonly values: Uint8Array[] = [];

  #lowerBound(key: Uint8Array): number {
    let low = 0;
    let high = this.keys.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (compareBytes(this.keys[mid]!, key) < 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }

  set(key: Uint8Array, value: Uint8Array): void {
    const at = this.#lowerBound(key);
    if (at < this.keys.length && compareBytes(this.keys[at]!, key) === 0) {
      this.values[at] = value;
      return;
    }
    this.keys.splice(at, 0, key);
    this.values.splice(at, 0, value);
  }

  get(key: Uint8Array): Uint8Array | undefined {
    const at = this.#lowerBound(key);
    return at < this.keys.length && compareBytes(this.keys[at]!, key) === 0 ? this.values[at] : undefined;
  }
}

function hashMapRows(entries: number, keys: Keys, rounds: number): DmoBenchRow[] {
  const heap = DmoDomain.create({ regionBytes: 64 << 20, maxActors: 1 }).createHeap(actorId(1));
  const value = new Uint8Array(16).fill(7);
  const out = new Uint8Array(64);
  const dmo = DmoHashMap.create(heap);
  const map = new Map<string, Uint8Array>();
  const { bytes, strings } = keys;
  for (let i = 0; i < entries; i++) {
    dmo.set(bytes[i]!, value);
    map.set(strings[i]!, value);
  }
  const rows: DmoBenchRow[] = [];
  const row = (operation: string, baseline: string, result: ReturnType<typeof comparePair>) =>
    rows.push({
      group: 'DmoHashMap',
      operation,
      entries,
      dmoNsPerOp: result.dmoNs,
      baseline,
      baselineNsPerOp: result.baselineNs,
      ratio: result.ratio,
    });
  const mapGet = () => {
    for (let i = 0; i < entries; i++) sink += map.get(strings[i]!)!.length;
  };
  row(
    'get (getInto: copy into caller buffer)',
    'Map.get(string)',
    comparePair(
      () => {
        for (let i = 0; i < entries; i++) sink += dmo.getInto(bytes[i]!, out);
      },
      mapGet,
      entries,
      rounds,
    ),
  );
  row(
    'get (get: fresh copy)',
    'Map.get(string)',
    comparePair(
      () => {
        for (let i = 0; i < entries; i++) sink += dmo.get(bytes[i]!)!.length;
      },
      mapGet,
      entries,
      rounds,
    ),
  );
  row(
    'get (getInto)',
    'Map.get(decode(bytes))',
    comparePair(
      () => {
        for (let i = 0; i < entries; i++) sink += dmo.getInto(bytes[i]!, out);
      },
      () => {
        for (let i = 0; i < entries; i++) sink += map.get(decoder.decode(bytes[i]!))!.length;
      },
      entries,
      rounds,
    ),
  );
  row(
    'put (update existing key)',
    'Map.set(string)',
    comparePair(
      () => {
        for (let i = 0; i < entries; i++) dmo.set(bytes[i]!, value);
      },
      () => {
        for (let i = 0; i < entries; i++) map.set(strings[i]!, value);
      },
      entries,
      rounds,
    ),
  );
  row(
    'put (insert into empty map, with growth)',
    'new Map + set(string)',
    comparePair(
      () => {
        const fresh = DmoHashMap.create(heap);
        for (let i = 0; i < entries; i++) fresh.set(bytes[i]!, value);
        fresh.destroy();
      },
      () => {
        const fresh = new Map<string, Uint8Array>();
        for (let i = 0; i < entries; i++) fresh.set(strings[i]!, value);
        sink += fresh.size;
      },
      entries,
      rounds,
    ),
  );
  return rows;
}

function numberMapRows(entries: number, next: () => number, rounds: number): DmoBenchRow[] {
  const heap = DmoDomain.create({ regionBytes: 16 << 20, maxActors: 1 }).createHeap(actorId(1));
  const keys: number[] = [];
  for (let i = 0; i < entries; i++) keys.push(next() & 0x3fff_ffff);
  const dmo = DmoNumberMap.create(heap);
  const map = new Map<number, number>();
  for (const key of keys) {
    dmo.set(key, 1);
    map.set(key, 1);
  }
  const rows: DmoBenchRow[] = [];
  const get = comparePair(
    () => {
      for (let i = 0; i < entries; i++) sink += dmo.get(keys[i]!)!;
    },
    () => {
      for (let i = 0; i < entries; i++) sink += map.get(keys[i]!)!;
    },
    entries,
    rounds,
  );
  rows.push({
    group: 'DmoNumberMap',
    operation: 'get',
    entries,
    dmoNsPerOp: get.dmoNs,
    baseline: 'Map<number,number>.get',
    baselineNsPerOp: get.baselineNs,
    ratio: get.ratio,
  });
  const increment = comparePair(
    () => {
      for (let i = 0; i < entries; i++) dmo.increment(keys[i]!);
    },
    () => {
      for (let i = 0; i < entries; i++) map.set(keys[i]!, (map.get(keys[i]!) ?? 0) + 1);
    },
    entries,
    rounds,
  );
  rows.push({
    group: 'DmoNumberMap',
    operation: 'increment (counter)',
    entries,
    dmoNsPerOp: increment.dmoNs,
    baseline: 'Map get + set',
    baselineNsPerOp: increment.baselineNs,
    ratio: increment.ratio,
  });
  return rows;
}

function skipListRows(entries: number, keys: Keys, rounds: number): DmoBenchRow[] {
  const heap = DmoDomain.create({ regionBytes: 64 << 20, maxActors: 1 }).createHeap(actorId(1));
  const value = new Uint8Array(16).fill(9);
  const out = new Uint8Array(64);
  const { bytes } = keys;
  const rows: DmoBenchRow[] = [];
  // Building the sorted array costs O(n²) element moves; at 10^5 a few rounds are plenty.
  const buildRounds = entries > 20_000 ? Math.min(rounds, 3) : rounds;
  const build = comparePair(
    () => {
      const list = DmoSkipList.create(heap, { seed: 11 });
      for (let i = 0; i < entries; i++) list.set(bytes[i]!, value);
      list.destroy();
    },
    () => {
      const sorted = new SortedArrayMap();
      for (let i = 0; i < entries; i++) sorted.set(bytes[i]!, value);
      sink += sorted.keys.length;
    },
    entries,
    buildRounds,
    0,
  );
  rows.push({
    group: 'DmoSkipList',
    operation: 'insert (random order, from empty)',
    entries,
    dmoNsPerOp: build.dmoNs,
    baseline: 'sorted array: search + splice',
    baselineNsPerOp: build.baselineNs,
    ratio: build.ratio,
  });
  const list = DmoSkipList.create(heap, { seed: 11 });
  const sorted = new SortedArrayMap();
  for (let i = 0; i < entries; i++) {
    list.set(bytes[i]!, value);
    sorted.set(bytes[i]!, value);
  }
  const lookup = comparePair(
    () => {
      for (let i = 0; i < entries; i++) sink += list.getInto(bytes[i]!, out);
    },
    () => {
      for (let i = 0; i < entries; i++) sink += sorted.get(bytes[i]!)!.length;
    },
    entries,
    rounds,
  );
  rows.push({
    group: 'DmoSkipList',
    operation: 'lookup (getInto)',
    entries,
    dmoNsPerOp: lookup.dmoNs,
    baseline: 'sorted array: binary search',
    baselineNsPerOp: lookup.baselineNs,
    ratio: lookup.ratio,
  });
  return rows;
}

function heapRows(rounds: number): DmoBenchRow[] {
  const rows: DmoBenchRow[] = [];
  const objects = 4096;
  const heap = DmoDomain.create({ regionBytes: 1 << 20, maxActors: 1 }).createHeap(actorId(1));
  const ids = Array.from({ length: objects }, () => heap.allocate(64));
  const raw = new Float64Array(objects * 8);
  const read = comparePair(
    () => {
      for (let i = 0; i < objects; i++) sink += heap.readF64(ids[i]!, 8);
    },
    () => {
      for (let i = 0; i < objects; i++) sink += raw[i * 8 + 1]!;
    },
    objects,
    rounds * 4,
  );
  rows.push({
    group: 'DmoHeap',
    operation: 'readF64 (checked: owner, generation, bounds)',
    entries: objects,
    dmoNsPerOp: read.dmoNs,
    baseline: 'Float64Array[i]',
    baselineNsPerOp: read.baselineNs,
    ratio: read.ratio,
  });
  const plain = DmoDomain.create({ regionBytes: 1 << 20, maxActors: 1 }).createHeap(actorId(1));
  const shared = DmoDomain.create({ regionBytes: 1 << 20, maxActors: 1, shared: true }).createHeap(
    actorId(1),
  );
  const churn = (target: typeof plain) => () => {
    for (let i = 0; i < objects; i++) target.free(target.allocate(64));
  };
  const lock = comparePair(churn(shared), churn(plain), objects, rounds * 4);
  rows.push({
    group: 'DmoHeap',
    operation: 'allocate+free 64 B, shared domain (futex lock)',
    entries: 0,
    dmoNsPerOp: lock.dmoNs,
    baseline: 'same, domain not shared (no lock)',
    baselineNsPerOp: lock.baselineNs,
    ratio: lock.ratio,
  });
  return rows;
}

function snapshotRow(entries: number, keys: Keys, log: (line: string) => void): DmoBenchRow {
  const heap = DmoDomain.create({ regionBytes: 64 << 20, maxActors: 1 }).createHeap(actorId(1));
  const map = DmoHashMap.create(heap);
  const value = new Uint8Array(16).fill(3);
  for (let i = 0; i < entries; i++) map.set(keys.bytes[i]!, value);
  const targetDomain = DmoDomain.create({ regionBytes: 64 << 20, maxActors: 1 });
  const times: number[] = [];
  let snapshotBytes = 0;
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    const snapshot = snapshotHeap(heap);
    const restored = restoreHeap(targetDomain, actorId(1), snapshot);
    sink += DmoHashMap.open(restored, map.rootId).size;
    times.push(performance.now() - start);
    snapshotBytes = snapshot.length;
    targetDomain.releaseHeap(actorId(1));
  }
  const ms = median(times);
  log(
    `snapshot+restore of a ${entries}-entry map: ${(snapshotBytes / 2 ** 20).toFixed(1)} MiB in ${ms.toFixed(1)} ms`,
  );
  // Baseline: copying the same number of bytes with TypedArray.set (a memcpy).
  const source = new Uint8Array(snapshotBytes);
  const target = new Uint8Array(snapshotBytes);
  const copyTimes: number[] = [];
  for (let round = 0; round < 5; round++) {
    const start = performance.now();
    target.set(source);
    copyTimes.push(performance.now() - start);
  }
  const copyMs = median(copyTimes);
  return {
    group: 'snapshot',
    operation: `snapshot+restore (${(snapshotBytes / 2 ** 20).toFixed(1)} MiB), ns per KiB`,
    entries,
    dmoNsPerOp: (ms * 1e6) / (snapshotBytes / 1024),
    baseline: 'Uint8Array.set of the same bytes',
    baselineNsPerOp: (copyMs * 1e6) / (snapshotBytes / 1024),
    ratio: ms / copyMs,
  };
}

/** Runs every DMO comparison and returns the rows (nothing is printed unless `log` is given). */
export async function runDmoBench(options: DmoBenchOptions = {}): Promise<DmoBenchRow[]> {
  const sizes = options.sizes ?? [10_000, 100_000];
  const seed = options.seed ?? 0x1badb002;
  const rounds = options.rounds ?? 7;
  const log = options.log ?? (() => {});
  const next = xorshift32(seed);
  const keys = makeKeys(Math.max(...sizes), next);
  const rows: DmoBenchRow[] = [];
  for (const entries of sizes) {
    log(`DmoHashMap at ${entries} entries…`);
    rows.push(...hashMapRows(entries, keys, rounds));
    log(`DmoNumberMap at ${entries} entries…`);
    rows.push(...numberMapRows(entries, next, rounds));
    log(`DmoSkipList at ${entries} entries…`);
    rows.push(...skipListRows(entries, keys, rounds));
    // Yield between sizes so a caller's event loop (progress output) stays alive.
    await new Promise((resolve) => setImmediate(resolve));
  }
  log('heap access and allocation…');
  rows.push(...heapRows(rounds));
  rows.push(snapshotRow(Math.max(...sizes), keys, log));
  if (sink === 0.5) log('unreachable'); // keeps `sink` observable
  return rows;
}

function formatTable(rows: readonly DmoBenchRow[]): string {
  const header = ['group', 'operation', 'n', 'dmo ns/op', 'baseline', 'base ns/op', 'ratio'];
  const body = rows.map((row) => [
    row.group,
    row.operation,
    row.entries === 0 ? '' : String(row.entries),
    row.dmoNsPerOp.toFixed(1),
    row.baseline,
    row.baselineNsPerOp.toFixed(1),
    `${row.ratio.toFixed(2)}×`,
  ]);
  const widths = header.map((title, column) =>
    Math.max(title.length, ...body.map((cells) => cells[column]!.length)),
  );
  const line = (cells: string[]) =>
    cells
      .map((cell, column) =>
        column >= 2 && column !== 4 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ');
  return [line(header), widths.map((width) => '-'.repeat(width)).join('  '), ...body.map(line)].join('\n');
}

async function main(): Promise<void> {
  const seed = 0x1badb002;
  process.stderr.write(`dmo bench: seed 0x${seed.toString(16)}, node ${process.version}\n`);
  const rows = await runDmoBench({ seed, log: (line) => process.stderr.write(`${line}\n`) });
  process.stdout.write(`${formatTable(rows)}\n`);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await main();
}
