/**
 * The files under RKV's live actors (file-storage.ts): a reopened FileLog equals the log that
 * wrote it — whatever mix of writes, truncations and staged snapshots came before, and across the
 * journal rewrites — a torn tail (a crash mid-append) is cut and the rest kept, and a damaged
 * record refuses the open with the file's name (deletes and tombstone items included); an LsmDisk
 * keeps every run (real SSTables, compacted by the engine) across a reopen, tombstones included,
 * and its D (the last slot its runs hold) with them: across a reopen, hidden from reads, and after
 * a crash at any file-system call of a flush exactly as the tables that survived say.
 */

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import fc from 'fast-check';
import { encodeRun } from '../../../../src/apps/rkv/actors/sim-disk.ts';
import type { DurableEntry } from '../../../../src/apps/rkv/actors/sim-log.ts';
import { ClusterStorageError } from '../../../../src/apps/rkv/cluster/errors.ts';
import { FileLog, LsmDisk } from '../../../../src/apps/rkv/cluster/file-storage.ts';
import { FaultyFileSystem } from '../../../../src/apps/rkv/lsm/faulty-file-system.ts';
import { NodeFileSystem } from '../../../../src/apps/rkv/lsm/file-system.ts';
import { SimulatedCrash } from '../../../../src/apps/rkv/lsm/memory-file-system.ts';
import { walkRangeInSteps } from '../actors/range-walk.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`file-storage seed ${seed}\n`);
const encoder = new TextEncoder();
const bytes = (text: string) => encoder.encode(text);

function entry(slot: number, ballot: number, chosen: boolean, key: string, value: string): DurableEntry {
  return { slot, ballot, chosen, clientId: 1, seq: slot, key: bytes(key), value: bytes(value) };
}

function withDir<T>(run: (dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), 'rkv-files-'));
  try {
    return run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a reopened FileLog equals the log that wrote it, through writes, truncations, stagings and rewrites', () => {
  let rewrites = 0;
  fc.assert(
    fc.property(
      fc.array(
        fc.oneof(
          fc.record({
            kind: fc.constant('write' as const),
            slots: fc.integer({ min: 1, max: 4 }),
            chosen: fc.boolean(),
          }),
          fc.record({ kind: fc.constant('truncate' as const), ahead: fc.integer({ min: 0, max: 6 }) }),
          fc.record({
            kind: fc.constant('stage' as const),
            chunks: fc.integer({ min: 1, max: 3 }),
            ahead: fc.integer({ min: 1, max: 8 }),
          }),
        ),
        // size 'max': fast-check's default size stops at 10 steps, and runs then rewrote their
        // journal about 10 times in 80 runs; at full length about 90.
        { maxLength: 40, size: 'max' },
      ),
      (steps) =>
        withDir((dir) => {
          const path = join(dir, 'log.journal');
          // A low rewrite threshold, so the runs go through journal rewrites too.
          const log = FileLog.open(path, { rewriteMinBytes: 512 });
          let next = 1;
          let ballot = 1;
          for (const step of steps) {
            if (step.kind === 'write') {
              // Every third slot a delete (key ∅, value = the key: messages.ts "Deletes").
              const entries = Array.from({ length: step.slots }, () =>
                next % 3 === 0
                  ? { ...entry(next++, ballot, step.chosen, '', ''), value: bytes(`k${next % 5}`) }
                  : entry(next++, ballot, step.chosen, `k${next % 5}`, `v${next}`),
              );
              log.write(ballot++, entries);
            } else if (step.kind === 'truncate') {
              const before = log.journalBytes;
              log.truncate(log.truncated + step.ahead);
              if (log.journalBytes < before) rewrites++;
            } else {
              const slot = log.truncated + step.ahead;
              for (let chunk = 0; chunk < step.chunks; chunk++) {
                log.stage(slot, chunk, step.chunks, {
                  items: [
                    { key: bytes(`s${chunk}`), value: bytes(`snap${slot}`) },
                    { key: new Uint8Array(0), value: bytes(`gone${chunk}`) },
                  ],
                  sessions: [{ clientId: 9, seq: slot + chunk }],
                });
              }
              next = Math.max(next, slot + 1);
            }
          }
          const reopened = FileLog.open(path, { rewriteMinBytes: 512 });
          assert.deepEqual(reopened.read(), log.read());
          // A staging left open must be the same on both: finishing it installs the same snapshot.
          const slot = log.truncated + 100;
          const last = { items: [{ key: bytes('fin'), value: bytes('al') }], sessions: [] };
          for (const each of [log, reopened]) {
            each.stage(slot, 0, 2, last);
            each.stage(slot, 1, 2, last);
          }
          assert.deepEqual(reopened.read(), log.read());
        }),
    ),
    { seed, numRuns: 80 },
  );
  assert.ok(rewrites >= 30, `only ${rewrites} journal rewrites in 80 runs`);
});

test('a journal that outgrows its state is rewritten, and still reopens equal', () => {
  withDir((dir) => {
    const path = join(dir, 'log.journal');
    const log = FileLog.open(path);
    const big = 'x'.repeat(4_000);
    for (let slot = 1; slot <= 600; slot++) {
      log.write(1, [entry(slot, 1, true, `k${slot % 7}`, `${slot}${big}`)]);
      log.truncate(slot);
    }
    // 600 records of ~5.5 KiB: the journal would be > 3 MiB without rewrites; the state is 7 keys.
    assert.ok(statSync(path).size < 1.5 * (1 << 20), `journal ${statSync(path).size} B`);
    assert.equal(log.truncated, 600);
    assert.deepEqual(FileLog.open(path).read(), log.read());
  });
});

test('a torn tail is cut and the rest kept; a damaged record refuses the open, naming the file', () => {
  withDir((dir) => {
    const path = join(dir, 'log.journal');
    const log = FileLog.open(path);
    log.write(3, [entry(1, 3, true, 'a', '1'), entry(2, 3, false, 'b', '2')]);
    const whole = readFileSync(path);
    appendFileSync(path, Buffer.from([200, 0, 0, 0, 1, 2, 3])); // a record header with half a body
    const reopened = FileLog.open(path);
    assert.deepEqual(reopened.read(), log.read());
    assert.equal(statSync(path).size, whole.length, 'the torn tail was cut');
    reopened.write(4, [entry(3, 4, false, 'c', '3')]);
    assert.equal(FileLog.open(path).read().entries.length, 3, 'appends after the cut are read back');

    const good = Buffer.from(readFileSync(path));
    const refused = (bytes: Buffer, why: RegExp) => {
      writeFileSync(path, bytes);
      assert.throws(
        () => FileLog.open(path),
        (error: unknown) =>
          error instanceof ClusterStorageError &&
          error.code === 'IPIPE_ERR_CLUSTER_STORAGE' &&
          error.message.includes(path) &&
          why.test(error.message),
      );
      assert.equal(statSync(path).size, bytes.length, 'a damaged file is left as it was, not cut');
    };
    const flipped = (at: number, mask: number) => {
      const copy = Buffer.from(good);
      copy[at] = (copy[at] ?? 0) ^ mask;
      return copy;
    };
    refused(flipped(20, 0xff), /payload checksum/); // inside the first record's payload
    refused(flipped(3, 0x01), /header checksum/); // the first record's length: not a torn tail
    // After a power loss: the file grew but its last bytes were never written (zeros), or a last
    // record reached the disk in part (a whole header, garbage after it): cut, the rest kept.
    const header = good.subarray(0, 12);
    for (const tail of [
      Buffer.alloc(300),
      Buffer.concat([header, Buffer.alloc(header.readUInt32LE(0), 7)]),
    ]) {
      writeFileSync(path, Buffer.concat([good, tail]));
      assert.equal(FileLog.open(path).read().entries.length, 3);
      assert.equal(statSync(path).size, good.length, 'the torn tail was cut');
    }
  });
});

test('an LsmDisk writes each run as durable SSTables, compacts them itself, and reopens with everything', () => {
  withDir((dir) => {
    const path = join(dir, 'lsm');
    const run = (pairs: [string, string][]) =>
      encodeRun(pairs.map(([k, v]) => ({ key: bytes(k), value: bytes(v) })));
    const model = new Map<string, string>();
    const disk = LsmDisk.open(path);
    for (let r = 0; r < 12; r++) {
      const pairs: [string, string][] = Array.from({ length: 50 }, (_, i) => [
        `key${(r * 37 + i * 11) % 300}`,
        `r${r}-${i}`,
      ]);
      for (const [k, v] of pairs) model.set(k, v);
      assert.equal(disk.writeLevel0(run(pairs)), 50);
      if (disk.level0Tables >= 4) assert.ok(disk.compactLevel0() > 0, 'compaction steps ran');
    }
    assert.ok(disk.level0Tables < 4, `level 0 was compacted (${disk.level0Tables} tables left)`);
    // No flush at close: what reopens is what writeLevel0 made durable itself.
    disk.close({ flush: false });
    const reopened = LsmDisk.open(path);
    for (const [k, v] of model) assert.deepEqual(reopened.lookup(bytes(k)).value, bytes(v), k);
    assert.equal(reopened.lookup(bytes('absent')).from, 'none');
    reopened.close();
  });
});

test('an LsmDisk keeps tombstones from runs: a deleted key stays deleted through compaction and reopen', () => {
  withDir((dir) => {
    const path = join(dir, 'lsm');
    const disk = LsmDisk.open(path);
    const deleted = new Set<string>();
    for (let r = 0; r < 10; r++) {
      const entries = Array.from({ length: 40 }, (_, i) => {
        const key = `key${(r * 13 + i * 7) % 120}`;
        // Every third entry of the later runs deletes its key.
        if (r >= 3 && i % 3 === 0) {
          deleted.add(key);
          return { key: bytes(key), value: undefined };
        }
        deleted.delete(key);
        return { key: bytes(key), value: bytes(`r${r}`) };
      });
      disk.writeLevel0(encodeRun(entries));
      if (disk.level0Tables >= 4) disk.compactLevel0();
    }
    assert.ok(deleted.size > 10, `keys deleted: ${deleted.size}`);
    disk.close({ flush: false });
    const reopened = LsmDisk.open(path);
    for (const key of deleted) assert.equal(reopened.lookup(bytes(key)).value, undefined, key);
    for (let k = 0; k < 120; k++) {
      if (deleted.has(`key${k}`)) continue;
      const value = reopened.lookup(bytes(`key${k}`)).value;
      assert.ok(value === undefined || value.length === 2 || value.length === 3, `key${k}`);
    }
    reopened.close();
  });
});

test("an LsmDisk's D (the last slot its runs hold) survives a reopen and compaction, and no read sees it", () => {
  withDir((dir) => {
    const path = join(dir, 'lsm');
    const run = (key: string) => encodeRun([{ key: bytes(key), value: bytes(`v-${key}`) }]);
    const disk = LsmDisk.open(path);
    assert.equal(disk.appliedSlot, 0, 'a new store holds no slot');
    disk.writeLevel0(run('a'), 10);
    disk.writeLevel0(run('b'), 25);
    disk.writeLevel0(run('c'), 17); // a restarted replica's first run: lower than the disk's D
    assert.equal(disk.appliedSlot, 25);
    for (let r = 0; r < 4; r++) disk.writeLevel0(run(`d${r}`), 30 + r);
    assert.ok(disk.compactLevel0() > 0, 'compaction steps ran');
    assert.equal(disk.appliedSlot, 33);
    disk.close({ flush: false });
    const reopened = LsmDisk.open(path);
    assert.equal(reopened.appliedSlot, 33, 'D reopens with the tables');
    assert.equal(reopened.lookup(new Uint8Array(0)).value, undefined, 'the slot is not a key');
    assert.equal(reopened.countLiveKeys(new Set()), 7, 'DBSIZE counts the 7 keys, not the slot');
    const keys = [...reopened.range(new Uint8Array(0), undefined)].map(([key]) =>
      new TextDecoder().decode(key),
    );
    assert.deepEqual(keys, ['a', 'b', 'c', 'd0', 'd1', 'd2', 'd3'], 'a scan from the start leaves it out');
    reopened.close();
  });
});

test("a crash at any file-system call of a flush leaves an LsmDisk's D exactly what its durable tables say", () => {
  withDir((dir) => {
    const first = encodeRun([{ key: bytes('before'), value: bytes('1') }]);
    const second = encodeRun([{ key: bytes('during'), value: bytes('2') }]);
    // How many mutating calls the second flush makes, counted on a dry run.
    const dry = new FaultyFileSystem(new NodeFileSystem());
    const dryDisk = LsmDisk.open(join(dir, 'dry'), { fileSystem: dry });
    dryDisk.writeLevel0(first, 10);
    const before = dry.mutatingOperations;
    dryDisk.writeLevel0(second, 20);
    const calls = dry.mutatingOperations - before;
    dryDisk.close({ flush: false });
    assert.ok(calls >= 4, `a flush makes ${calls} mutating calls`);
    const outcomes = new Set<number>();
    for (let k = 1; k <= calls; k++) {
      const path = join(dir, `crash-${k}`);
      const fileSystem = new FaultyFileSystem(new NodeFileSystem());
      const disk = LsmDisk.open(path, { fileSystem });
      disk.writeLevel0(first, 10);
      fileSystem.failAtOperation = fileSystem.mutatingOperations + k;
      assert.throws(() => disk.writeLevel0(second, 20), SimulatedCrash, `call ${k} crashes`);
      fileSystem.revive();
      const reopened = LsmDisk.open(path);
      const landed = reopened.lookup(bytes('during')).value !== undefined;
      assert.deepEqual(reopened.lookup(bytes('before')).value, bytes('1'), `call ${k}: the first run stays`);
      assert.equal(
        reopened.appliedSlot,
        landed ? 20 : 10,
        `call ${k}: D is the durable tables' (landed ${landed})`,
      );
      outcomes.add(reopened.appliedSlot);
      reopened.close();
    }
    assert.deepEqual([...outcomes].sort(), [10, 20], 'crashes before and after the commit were both tried');
  });
});

test('an LsmDisk with tables but no D (written before D was kept) counts as ahead of every slot', () => {
  withDir((dir) => {
    const path = join(dir, 'lsm');
    const disk = LsmDisk.open(path);
    disk.writeLevel0(encodeRun([{ key: bytes('old'), value: bytes('1') }])); // a run of no slot
    assert.equal(disk.appliedSlot, 0);
    disk.close({ flush: false });
    const reopened = LsmDisk.open(path);
    assert.equal(reopened.appliedSlot, Number.MAX_SAFE_INTEGER, 'what its tables hold is unknown');
    reopened.close();
    LsmDisk.open(join(dir, 'empty')).close();
    const empty = LsmDisk.open(join(dir, 'empty'));
    assert.equal(empty.appliedSlot, 0, 'an empty store holds no slot');
    empty.close();
  });
});

test('LsmDisk.range stops after its step budget over on-disk tombstones and goes on from there', () => {
  withDir((dir) => {
    const disk = LsmDisk.open(dir);
    try {
      const key = (i: number) => bytes(`key:${String(i).padStart(6, '0')}`);
      const keys = 3000;
      disk.writeLevel0(
        encodeRun(Array.from({ length: keys }, (_, i) => ({ key: key(i), value: bytes(`v${i}`) }))),
      );
      // A later table deletes all but every 500th key: its tombstones shadow the values below.
      const deletes = [];
      for (let i = 0; i < keys; i++) if (i % 500 !== 499) deletes.push({ key: key(i), value: undefined });
      disk.writeLevel0(encodeRun(deletes));
      const budget = 200;
      const first = disk.range(new Uint8Array(0), undefined, budget).next();
      assert.equal(first.done, true, 'the first 200 entries are tombstones: no pair');
      assert.deepEqual(first.value, key(budget), 'it stopped at the first key it did not visit');
      const { keys: live, reads } = walkRangeInSteps(disk, budget);
      assert.deepEqual(
        live.map((k) => new TextDecoder().decode(k)),
        Array.from({ length: 6 }, (_, i) => `key:${String(500 * i + 499).padStart(6, '0')}`),
      );
      assert.ok(reads >= keys / budget, `${reads} reads of at most ${budget} entries`);
    } finally {
      disk.close({ flush: false });
    }
  });
});
