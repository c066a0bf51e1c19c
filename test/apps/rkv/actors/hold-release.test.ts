/**
 * A flush hold is always released (storage-actors.ts "Flush holds"): the SSTable reader answers
 * every scan page, delete probe and key count the memtable sends it — with the client refused
 * when it cannot read its disk (the disk threw, as a damaged SSTable does on a live node) or is
 * not set up — so the memtable's flushes never stop for good.
 *
 *   disk throws     scan, DBSIZE and a delete's probe each get a refusal naming the error (a get
 *                   too); the memtable holds no hold afterwards and flushes again
 *   not set up      a reader that lost its setup refuses the scan and the probe, and releases
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import { type RkvMessage, rkvKey, rkvMessages } from '../../../../src/apps/rkv/actors/messages.ts';
import type { RkvSimDeployment } from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import {
  type DiskLookup,
  registerSimDisk,
  SimDisk,
  simDisk,
} from '../../../../src/apps/rkv/actors/sim-disk.ts';
import { LsmCorruptTableError } from '../../../../src/apps/rkv/lsm/errors.ts';
import { DmoHashMap, DmoNumberMap } from '../../../../src/dmo/index.ts';
import { askWithin, call, deployGroup, putMessage, settle } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const EMPTY = new Uint8Array(0);

/** A disk whose every read fails as a damaged table does on a live node. */
class BrokenDisk extends SimDisk {
  override lookup(_key: Uint8Array): DiskLookup {
    throw new LsmCorruptTableError('000007.sst', 'block checksum mismatch');
  }
  override countLiveKeys(_decided: ReadonlySet<string>): number {
    throw new LsmCorruptTableError('000007.sst', 'block checksum mismatch');
  }
  // biome-ignore lint/correctness/useYield: it fails before its first pair
  override *range(): Generator<[Uint8Array, Uint8Array], Uint8Array | undefined, undefined> {
    throw new LsmCorruptTableError('000007.sst', 'block checksum mismatch');
  }
}

function readerDiskName(d: RkvSimDeployment, replica: number): string {
  const reader = d.cluster.node(replica).instance(d.sstables[replica]!.id);
  const setup = rkvMessages.decode(DmoHashMap.open(reader.heap, reader.root('setup')!).getString('setup')!);
  assert.equal(setup.type, 'sstable-setup');
  return setup.type === 'sstable-setup' ? setup.disk : '';
}

/** The flush holds replica `replica`'s memtable has out, all epochs together. */
function holdsOut(d: RkvSimDeployment, replica: number): number {
  const memtable = d.cluster.node(replica).instance(d.memtables[replica]!.id);
  const root = memtable.root('holds');
  if (root === undefined) return 0;
  let out = 0;
  for (const [, count] of DmoNumberMap.open(memtable.heap, root).entries()) out += count;
  return out;
}

/** Writes until the leader's disk gains a table: the memtable flushes. */
function assertFlushes(d: RkvSimDeployment, firstSeq: number): void {
  const disk = d.disks[d.leader]!;
  const tables = disk.tablesWritten;
  for (let i = 0; i < 30 && disk.tablesWritten === tables; i++) {
    const answer = call(d, d.leader, d.consensus[d.leader] as Ref, putMessage(9, firstSeq + i, 700 + i, i));
    assert.equal(answer.type, 'put-ok');
  }
  assert.ok(disk.tablesWritten > tables, 'the memtable flushes again');
}

/** Asks the leader's consensus actor; the answer must be a refusal matching `pattern` within 5 ms. */
function assertRefused(d: RkvSimDeployment, message: RkvMessage, pattern: RegExp): void {
  const answer = askWithin(d, d.leader, d.consensus[d.leader] as Ref, message, 5_000_000);
  assert.ok(answer !== undefined, `${message.type}: no answer within 5 ms`);
  assert.equal(answer.type, 'refused', `${message.type}: ${JSON.stringify(answer)}`);
  if (answer.type === 'refused') assert.match(answer.reason, pattern, message.type);
}

test('a disk that throws: scan, DBSIZE and a probe are refused with the error, and every hold is released', () => {
  const d = deployGroup({ memtableLimitBytes: 64 });
  const leader = d.leader;
  const name = readerDiskName(d, leader);
  const disk = simDisk(name) as SimDisk;
  registerSimDisk(name, new BrokenDisk({ baseKeys: 0, valueBytes: 0 }));
  const failed = /could not read its disk \(LsmCorruptTableError: SSTable 000007\.sst is corrupt/;
  assertRefused(d, { type: 'scan', start: EMPTY, end: EMPTY, limit: 10, maxBytes: 0 }, failed);
  assertRefused(d, { type: 'dbsize' }, failed);
  assertRefused(d, { type: 'del', clientId: 1, seq: 1, key: rkvKey(7) }, failed);
  // A get that misses the memtables is refused the same way (no hold: only its client waits).
  assertRefused(d, { type: 'get', key: rkvKey(8) }, failed);
  settle(d, 1_000_000);
  assert.equal(holdsOut(d, leader), 0, 'no hold left out');
  registerSimDisk(name, disk);
  assertFlushes(d, 1);
});

test('a reader that is not set up refuses a scan and a probe, and releases their holds', () => {
  const d = deployGroup({ memtableLimitBytes: 64 });
  const leader = d.leader;
  const reader = d.cluster.node(leader).instance(d.sstables[leader]!.id);
  const setupMap = DmoHashMap.open(reader.heap, reader.root('setup')!);
  const setup = setupMap.getString('setup')!;
  setupMap.deleteString('setup');
  const notSetUp = /is not set up yet; retry once the replica has started/;
  assertRefused(d, { type: 'scan', start: EMPTY, end: EMPTY, limit: 10, maxBytes: 0 }, notSetUp);
  assertRefused(d, { type: 'del', clientId: 1, seq: 1, key: rkvKey(7) }, notSetUp);
  settle(d, 1_000_000);
  assert.equal(holdsOut(d, leader), 0, 'no hold left out');
  setupMap.setString('setup', setup);
  assertFlushes(d, 1);
});
