/**
 * The API RKV's actors use (docs/apps/rkv-lsm.md): the NIC memtable actor's DMO memtable frozen,
 * migrated to the host (heap snapshot → restore) and flushed there as a level-0 table in slices
 * (iPipe §5's minor compaction); major compaction run incrementally with `compactStep`, reads
 * interleaved between slices; and in-place recovery after a manifest write that failed past its
 * rename (the one failure whose on-disk outcome is uncertain), including every fault point of a
 * fixed workload in I/O-error mode.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DmoMemtable,
  FaultyFileSystem,
  isLsmError,
  LsmEngine,
  type LsmFile,
  type LsmFileSystem,
  type LsmLockResult,
  LsmTree,
  MemoryFileSystem,
  PlainMemtable,
} from '../../../../src/apps/rkv/lsm/index.ts';
import { DmoDomain, restoreHeap, snapshotHeap } from '../../../../src/dmo/index.ts';
import { actorId } from '../../../../src/ids.ts';
import { fromHex, hex, type Model, SMALL_TREE, seededRandom, sortedModel, utf8 } from './helpers.ts';

const TREE = {
  blockBytes: SMALL_TREE.blockBytes,
  targetTableBytes: SMALL_TREE.targetTableBytes,
  level1MaxBytes: SMALL_TREE.level1MaxBytes,
  levelSizeRatio: SMALL_TREE.levelSizeRatio,
  level0CompactionTrigger: SMALL_TREE.level0CompactionTrigger,
  levelCount: SMALL_TREE.levelCount,
} as const;

/** Reads every model key through `tree.get` and the whole store through `tree.cursor`. */
function assertTreeMatches(tree: LsmTree, model: Model, label: string): void {
  for (const [key, value] of model) {
    const entry = tree.get(fromHex(key));
    assert.ok(entry?.kind === 'put' && hex(entry.value) === value, `${label}: key ${key}`);
  }
  const cursor = tree.cursor();
  const seen: [string, string][] = [];
  try {
    for (cursor.seekToFirst(); cursor.valid; cursor.next()) {
      const entry = cursor.entry();
      if (entry.kind === 'put') seen.push([hex(entry.key), hex(entry.value)]);
    }
  } finally {
    cursor.close();
  }
  assert.deepEqual(seen, sortedModel(model), `${label}: scan`);
}

test('minor compaction as in RKV: a frozen DMO memtable migrates NIC → host and is flushed in slices', () => {
  const nic = DmoDomain.create({ regionBytes: 1 << 20, maxActors: 4 });
  const host = DmoDomain.create({ regionBytes: 1 << 20, maxActors: 4 });
  const tree = LsmTree.open({ directory: '/db', fileSystem: new MemoryFileSystem(), ...TREE });
  const model: Model = new Map();
  let sequence = 0;
  try {
    for (let generation = 1; generation <= 3; generation++) {
      // Each memtable lives in its own heap (one per memtable generation), so it can move alone.
      const owner = actorId(generation);
      const memtable = DmoMemtable.create(nic.createHeap(owner));
      for (let i = 0; i < 120; i++) {
        const key = utf8(`key-${(i * 7 + generation) % 150}`);
        if (i % 9 === 4) {
          memtable.delete(key, ++sequence);
          model.delete(hex(key));
        } else {
          const value = utf8(`g${generation}-v${i}`);
          memtable.put(key, value, ++sequence);
          model.set(hex(key), hex(value));
        }
      }
      // Freeze (the actor writes to a new memtable from here), move the heap, re-open by root id.
      const rootId = memtable.rootId;
      const bytes = snapshotHeap(nic.heapOf(owner)!);
      nic.releaseHeap(owner);
      const hostHeap = restoreHeap(host, owner, bytes);
      const migrated = DmoMemtable.open(hostHeap, rootId);
      const begun = tree.beginFlush(migrated, { flushedSequence: sequence });
      assert.equal(begun.kind, 'started');
      if (begun.kind !== 'started') return;
      let slices = 0;
      for (let report = begun.job.step(256); !report.done; report = begun.job.step(256)) {
        slices++;
        // Between slices the host serves reads; the memtable being flushed is not in the tree yet.
        assert.equal(tree.flushedSequence < sequence, true);
      }
      assert.ok(slices >= 3, `the flush ran in ${slices} slices`);
      assert.equal(tree.flushedSequence, sequence);
      migrated.destroy();
      assert.equal(hostHeap.stats().liveObjects, 0);
      host.releaseHeap(owner);
      assertTreeMatches(tree, model, `after generation ${generation}`);
    }
    assert.equal(tree.stats().flushes, 3);
  } finally {
    tree.close();
  }
});

test('major compaction in slices: reads between every step stay exact; levels end within their limits', () => {
  const tree = LsmTree.open({ directory: '/db', fileSystem: new MemoryFileSystem(), ...TREE });
  const random = seededRandom(4242);
  const model: Model = new Map();
  let sequence = 0;
  try {
    for (let flush = 0; flush < 12; flush++) {
      const memtable = new PlainMemtable();
      for (let i = 0; i < 60; i++) {
        const key = utf8(`key-${Math.floor(random() * 400)}`);
        if (random() < 0.2) {
          memtable.delete(key, ++sequence);
          model.delete(hex(key));
        } else {
          const value = utf8(`v${sequence}`.padEnd(10 + Math.floor(random() * 40), '.'));
          memtable.put(key, value, ++sequence);
          model.set(hex(key), hex(value));
        }
      }
      tree.flush(memtable);
      memtable.destroy();
      // Incremental: a host actor does one slice per turn and serves reads in between.
      let steps = 0;
      for (;;) {
        const step = tree.compactStep(512);
        if (step.kind === 'idle') break;
        steps++;
        assertTreeMatches(tree, model, `flush ${flush}, step ${steps}`);
        if (step.kind === 'progress') assert.ok(tree.compactionJob !== undefined);
      }
      assert.ok(!tree.compactionNeeded);
    }
    const stats = tree.stats();
    assert.ok(stats.compactions > 0);
    for (const level of stats.levels) assert.ok(level.score < 1, `level ${level.level} score ${level.score}`);
    assert.ok(
      stats.levels.slice(1).some((level) => level.tableCount > 0),
      'data reached the deeper levels',
    );
    // A full compaction leaves one sorted run in the last level without a single tombstone.
    tree.compactAll();
    const tables = tree.tables();
    for (let level = 0; level < tables.length - 1; level++) assert.equal(tables[level]!.length, 0);
    assert.ok(tables.at(-1)!.every((table) => table.tombstoneCount === 0));
    assertTreeMatches(tree, model, 'after compactAll');
  } finally {
    tree.close();
  }
});

/** Delegates to an in-memory disk; fails the directory fsync right after the next manifest rename. */
class FailAfterManifestRename implements LsmFileSystem {
  readonly inner = new MemoryFileSystem();
  armed = false;
  #renamed = false;
  makeDirectory(path: string): void {
    this.inner.makeDirectory(path);
  }
  list(directory: string): string[] {
    return this.inner.list(directory);
  }
  openRead(path: string): LsmFile {
    return this.inner.openRead(path);
  }
  create(path: string): LsmFile {
    return this.inner.create(path);
  }
  rename(from: string, to: string): void {
    this.inner.rename(from, to);
    this.#renamed = from.endsWith('/MANIFEST.tmp');
  }
  remove(path: string): void {
    this.inner.remove(path);
  }
  syncDirectory(path: string): void {
    if (this.armed && this.#renamed) {
      this.armed = false;
      throw Object.assign(new Error('EIO: injected I/O error, fsync of the directory'), { code: 'EIO' });
    }
    this.inner.syncDirectory(path);
  }
  lock(directory: string): LsmLockResult {
    return this.inner.lock(directory);
  }
}

test('a manifest write failing after its rename: reads go on, the next change recovers in place', () => {
  const fs = new FailAfterManifestRename();
  const engine = LsmEngine.open({
    directory: '/db',
    fileSystem: fs,
    ...TREE,
    maintenance: 'manual',
    memtableBytes: 2048,
  });
  const model: Model = new Map();
  try {
    const write = (i: number) => {
      const key = utf8(`key-${i % 97}`);
      const value = utf8(`value-${i}`);
      engine.put(key, value);
      model.set(hex(key), hex(value));
    };
    for (let i = 0; i < 200; i++) write(i);
    engine.flush();
    for (let i = 200; i < 300; i++) write(i);
    // The flush's commit: MANIFEST renamed into place, then the directory fsync fails.
    fs.armed = true;
    const lastBefore = engine.lastSequence;
    assert.throws(
      () => engine.flush(),
      (error: unknown) => isLsmError(error, 'IPIPE_ERR_LSM_IO'),
    );
    assert.equal(engine.tree.needsRecovery, true);
    // Reads are still exact (the old version's files were all kept).
    for (const [key, value] of model) assert.equal(hex(engine.get(fromHex(key))!), value);
    // The next flush recovers: the uncertain commit had landed, so nothing is written twice.
    const flushesBefore = engine.stats().flushes;
    engine.flush();
    assert.equal(engine.tree.needsRecovery, false);
    assert.equal(engine.flushedSequence, lastBefore);
    assert.equal(engine.stats().flushes, flushesBefore, 'the memtable was already durable: no second table');
    for (let i = 300; i < 400; i++) write(i);
    engine.flush();
    engine.tree.compactAll();
    for (const [key, value] of model) assert.equal(hex(engine.get(fromHex(key))!), value);
  } finally {
    engine.close();
  }
  // Power loss now loses nothing: everything was made durable again.
  fs.inner.crash('power', seededRandom(9));
  const reopened = LsmEngine.open({ directory: '/db', fileSystem: fs, ...TREE });
  try {
    for (const [key, value] of model) assert.equal(hex(reopened.get(fromHex(key))!), value);
  } finally {
    reopened.close();
  }
});

test('an I/O error at every filesystem call of a fixed workload fails one operation and loses nothing', () => {
  const run = (fs: LsmFileSystem, onError: (error: unknown) => void): Model => {
    const model: Model = new Map();
    const engine = LsmEngine.open({
      directory: '/db',
      fileSystem: fs,
      ...TREE,
      maintenance: 'manual',
      memtableBytes: 1024,
    });
    const attempt = (action: () => void) => {
      try {
        action();
      } catch (error) {
        onError(error);
      }
    };
    for (let i = 0; i < 160; i++) {
      const key = utf8(`key-${(i * 13) % 41}`);
      if (i % 7 === 3) {
        attempt(() => engine.delete(key));
        model.delete(hex(key));
      } else {
        const value = utf8(`value-${i}`);
        attempt(() => engine.put(key, value));
        model.set(hex(key), hex(value));
      }
      if (i % 5 === 0) attempt(() => engine.maintenanceStep(700));
    }
    attempt(() => engine.tree.compactAll());
    attempt(() => engine.flush());
    engine.flush(); // a retry after any failure must succeed (the fault fires once)
    engine.close();
    return model;
  };
  const dry = new FaultyFileSystem(new MemoryFileSystem());
  run(dry, (error) => assert.fail(`dry run failed: ${String(error)}`));
  const total = dry.mutatingOperations;
  assert.ok(total > 100, `${total} calls`);
  for (let k = 1; k <= total; k++) {
    const memory = new MemoryFileSystem();
    const fs = new FaultyFileSystem(memory);
    fs.fault = 'error';
    fs.failAtOperation = k;
    let failures = 0;
    let model: Model;
    try {
      model = run(fs, (error) => {
        failures++;
        assert.ok(isLsmError(error, 'IPIPE_ERR_LSM_IO'), `fault ${k}: ${String(error)}`);
      });
    } catch (error) {
      // Only the engine's open may fail outright (its first manifest write); then nothing was written.
      assert.ok(isLsmError(error, 'IPIPE_ERR_LSM_IO'), `fault ${k}: ${String(error)}`);
      continue;
    }
    // A failed write was not applied: put/delete that threw are still in `model` only if they
    // ran, so drop nothing here — manual maintenance never fails a put or delete.
    assert.ok(failures <= 1, `fault ${k}: ${failures} failures`);
    const reopened = LsmEngine.open({ directory: '/db', fileSystem: fs, ...TREE });
    try {
      for (const [key, value] of model)
        assert.equal(hex(reopened.get(fromHex(key)) ?? new Uint8Array()), value, `fault ${k}`);
      let count = 0;
      for (const _ of reopened.scan()) count++;
      assert.equal(count, model.size, `fault ${k}: scan`);
    } finally {
      reopened.close();
    }
    // Power loss after the clean close keeps it all too.
    memory.crash('power', seededRandom(k));
    const afterCrash = LsmEngine.open({ directory: '/db', fileSystem: fs, ...TREE });
    try {
      for (const [key, value] of model)
        assert.equal(hex(afterCrash.get(fromHex(key)) ?? new Uint8Array()), value, `fault ${k} crash`);
    } finally {
      afterCrash.close();
    }
  }
});
