/**
 * The live platform's Paxos storage (file-storage.ts) on a temporary directory: durable round
 * trip, a replica restarted on it keeps its promise, compaction after a snapshot, the torn tail a
 * crash inside a sync leaves (recovered, reported), and damage a crash cannot leave — bad magic,
 * a bad frame with valid frames after it, a checksummed frame that does not decode — refused with
 * `PaxosStorageCorruptError` naming the file.
 */

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { crc32 } from 'node:zlib';
import {
  type Ballot,
  clientId,
  FilePaxosStorage,
  type KvCommand,
  type KvResult,
  KvStateMachine,
  kvCodec,
  makeBallot,
  PaxosReplica,
  PaxosStorageCorruptError,
  replicaId,
} from '../../../../src/apps/rkv/paxos/index.ts';
import { isIpipeError } from '../../../../src/errors.ts';

const directory = mkdtempSync(join(tmpdir(), 'ipipe-paxos-storage-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
const freshPath = (): string => join(directory, `replica-${++files}.paxos`);

const MAGIC_BYTES = 8;
const b1 = makeBallot(1, replicaId(0));
const b2 = makeBallot(2, replicaId(1));

function open(path: string): FilePaxosStorage<KvCommand, KvResult> {
  return FilePaxosStorage.open(path, kvCodec);
}

/** A log with two syncs (two frames): promise b1 + slot 1; then promise b2 + slot 2 (a no-op). */
function twoFrames(path: string): void {
  const storage = open(path);
  storage.savePromise(b1);
  storage.saveAccepted(1, b1, {
    kind: 'request',
    clientId: clientId(4),
    seq: 9,
    payload: { op: 'put', key: 'k', value: 'v' },
  });
  storage.sync();
  storage.savePromise(b2);
  storage.saveAccepted(2, b2, { kind: 'noop' });
  storage.sync();
  storage.close();
}

function expectCorrupt(path: string, fragment: RegExp): void {
  assert.throws(
    () => open(path),
    (error: unknown) => {
      assert.ok(
        error instanceof PaxosStorageCorruptError,
        `expected PaxosStorageCorruptError, got ${String(error)}`,
      );
      assert.ok(isIpipeError(error, 'IPIPE_ERR_PAXOS_STORAGE_CORRUPT'));
      assert.equal(error.path, path);
      assert.ok(error.message.startsWith(`${path}: `), 'the message names the file first');
      assert.match(error.message, fragment);
      assert.match(error.message, /refusing to start on it/);
      return true;
    },
  );
}

test('what was synced comes back after reopening; what was only buffered does not', () => {
  const path = freshPath();
  twoFrames(path);
  const storage = open(path);
  storage.savePromise(makeBallot(7, replicaId(2))); // buffered, never synced
  storage.close();

  const reopened = open(path);
  assert.deepEqual(reopened.recovery, {
    path,
    created: false,
    framesRecovered: 2,
    recordsRecovered: 4,
    validBytes: statSync(path).size,
    discardedBytes: 0,
    stoppedEarly: null,
    removedStaleTemp: false,
  });
  const state = reopened.load();
  assert.equal(state.promised, b2);
  assert.equal(state.snapshot, null);
  assert.deepEqual(state.accepted, [
    {
      slot: 1,
      ballot: b1,
      command: { kind: 'request', clientId: 4, seq: 9, payload: { op: 'put', key: 'k', value: 'v' } },
    },
    { slot: 2, ballot: b2, command: { kind: 'noop' } },
  ]);
  reopened.close();
});

test('a replica restarted on the file keeps the promise it gave before the restart', () => {
  const path = freshPath();
  const config = {
    replicaId: replicaId(1),
    replicaCount: 3,
    heartbeatIntervalNs: 10,
    electionTimeoutMinNs: 40,
    electionTimeoutMaxNs: 80,
  };
  const start = (): {
    replica: PaxosReplica<KvCommand, KvResult>;
    storage: FilePaxosStorage<KvCommand, KvResult>;
  } => {
    const storage = open(path);
    const replica = new PaxosReplica({
      config,
      storage,
      stateMachine: new KvStateMachine(),
      random: { next: () => 0.5 },
      nowNs: 0,
    });
    return { replica, storage };
  };
  const first = start();
  const ballot = makeBallot(3, replicaId(2)) as Ballot;
  const outputs = first.replica.handle({ type: 'prepare', from: replicaId(2), ballot, fromSlot: 1 }, 1);
  assert.equal(outputs.send[0]?.message.type, 'promise');
  first.storage.close(); // the process dies right after sending the promise

  const second = start();
  assert.equal(second.replica.status().promised, ballot);
  const lower = second.replica.handle({ type: 'prepare', from: replicaId(0), ballot: b1, fromSlot: 1 }, 2);
  assert.equal(lower.send[0]?.message.type, 'reject', 'the restarted acceptor still refuses lower ballots');
  second.storage.close();
});

test('a snapshot compacts the file: records below it are gone and the file shrinks', () => {
  const path = freshPath();
  const storage = open(path);
  storage.savePromise(b1);
  for (let slot = 1; slot <= 50; slot++) storage.saveAccepted(slot, b1, { kind: 'noop' });
  storage.sync();
  const before = statSync(path).size;
  storage.saveSnapshot({
    lastIncludedSlot: 48,
    state: new KvStateMachine().snapshot(),
    sessions: [{ clientId: clientId(4), seq: 9, result: { op: 'put' } }],
  });
  storage.sync();
  assert.ok(statSync(path).size < before / 4, `compacted from ${before} to ${statSync(path).size} bytes`);
  storage.close();

  writeFileSync(`${path}.tmp`, 'half-written compaction');
  const reopened = open(path);
  assert.equal(reopened.recovery.removedStaleTemp, true);
  const state = reopened.load();
  assert.equal(state.promised, b1);
  assert.equal(state.snapshot?.lastIncludedSlot, 48);
  assert.deepEqual(state.snapshot?.sessions, [{ clientId: 4, seq: 9, result: { op: 'put' } }]);
  assert.deepEqual(
    state.accepted.map((entry) => entry.slot),
    [49, 50],
  );
  reopened.close();
});

test('a torn last frame (a crash inside sync) is cut off and reported; appends continue after it', () => {
  for (const tear of ['short', 'garbled'] as const) {
    const path = freshPath();
    twoFrames(path);
    const bytes = readFileSync(path);
    const firstFrameEnd = MAGIC_BYTES + 8 + bytes.readUInt32LE(MAGIC_BYTES);
    if (tear === 'short') {
      writeFileSync(path, bytes.subarray(0, bytes.length - 3)); // the last frame's tail never reached disk
    } else {
      bytes[bytes.length - 2]! ^= 0xff; // its pages reached disk damaged
      writeFileSync(path, bytes);
    }
    const storage = open(path);
    assert.equal(storage.recovery.framesRecovered, 1, tear);
    assert.equal(storage.recovery.validBytes, firstFrameEnd);
    assert.ok(storage.recovery.discardedBytes > 0);
    assert.match(
      storage.recovery.stoppedEarly ?? '',
      tear === 'short' ? /truncated frame payload/ : /crc mismatch/,
    );
    assert.equal(statSync(path).size, firstFrameEnd, 'the torn tail is truncated on disk');
    assert.equal(storage.load().promised, b1, 'the torn batch is dropped whole');
    assert.deepEqual(
      storage.load().accepted.map((entry) => entry.slot),
      [1],
    );

    storage.savePromise(b2);
    storage.sync();
    storage.close();
    const again = open(path);
    assert.equal(again.recovery.stoppedEarly, null, 'new frames follow the valid ones');
    assert.equal(again.load().promised, b2);
    again.close();
  }
});

test('a file that is not a Paxos log is refused, naming the file', () => {
  const path = freshPath();
  writeFileSync(path, 'SQLite format 3\0 and more');
  expectCorrupt(path, /bad magic/);
  // A file holding only the start of the magic is a creation torn by a crash: started afresh.
  const torn = freshPath();
  writeFileSync(torn, 'IPXP');
  const storage = open(torn);
  assert.equal(storage.recovery.created, true);
  storage.close();
});

test('damage in the middle of the log (a valid frame after a bad one) is refused, not truncated', () => {
  const path = freshPath();
  twoFrames(path);
  const bytes = readFileSync(path);
  bytes[MAGIC_BYTES + 8 + 3]! ^= 0x40; // inside the first frame's payload
  writeFileSync(path, bytes);
  expectCorrupt(path, /frame at offset 8 is damaged \(crc mismatch\) but a valid frame follows/);
  assert.deepEqual(readFileSync(path), bytes, 'a refused file is left exactly as it was');
});

test('a frame whose checksum holds but whose records do not decode is refused', () => {
  const path = freshPath();
  twoFrames(path);
  const payload = Buffer.from([1, 0, 0, 0, 99]); // one record of one byte: record type 99
  const header = Buffer.alloc(8);
  header.writeUInt32LE(payload.length, 0);
  header.writeUInt32LE(crc32(payload), 4);
  appendFileSync(path, Buffer.concat([header, payload]));
  expectCorrupt(path, /passes its checksum but does not decode \(unknown record type 99\)/);
});
