/**
 * The coordinator log on a real file (src/apps/dt/log-format.ts, log-storage.ts, logger-logic.ts):
 * a torn tail is cut off and reported, damage in the middle with valid records after it is refused
 * (or discarded on request, saying how much was lost), and the logger serves a restarted coordinator
 * every commit that was fsynced, with a fenced new epoch.
 */

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { DtLogCorruptError, DtLogIoError } from '../../../src/apps/dt/errors.ts';
import {
  encodeLogRecord,
  LOG_HEADER_BYTES,
  type LogRecord,
  replayLog,
  scanLog,
} from '../../../src/apps/dt/log-format.ts';
import { FileLogStorage, MemoryLogStorage } from '../../../src/apps/dt/log-storage.ts';
import {
  describeLogRecovery,
  initialLoggerState,
  LoggerLogic,
  type LoggerState,
} from '../../../src/apps/dt/logger-logic.ts';
import type { DtMsg } from '../../../src/apps/dt/messages.ts';
import { MemoryCell } from '../../../src/apps/dt/types.ts';
import { isIpipeError } from '../../../src/errors.ts';
import { Random } from '../../../src/random.ts';

const directory = mkdtempSync(join(tmpdir(), 'ipipe-dt-log-'));
after(() => rmSync(directory, { recursive: true, force: true }));
let files = 0;
function tempLog(): string {
  return join(directory, `coordinator-${files++}.log`);
}

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

function commit(client: number, seq: number, epoch = 1): LogRecord {
  return {
    type: 'commit',
    epoch,
    client,
    seq,
    writes: [
      { shard: 0, key: `k${seq}`, value: bytes(`v${client}.${seq}`), version: seq },
      { shard: 1, key: `j${seq}`, value: bytes('x'), version: 1 },
    ],
  };
}

/** A log file holding `records`; returns its path and each record's end offset. */
function writeLog(records: readonly LogRecord[]): { path: string; ends: number[] } {
  const path = tempLog();
  const storage = new FileLogStorage(path);
  const ends: number[] = [];
  for (const record of records) {
    storage.append(encodeLogRecord(record));
    ends.push(storage.size());
  }
  storage.sync();
  storage.close();
  return { path, ends };
}

const RECORDS: LogRecord[] = [
  { type: 'epoch', epoch: 1 },
  commit(1, 1),
  commit(2, 1),
  commit(1, 2),
  commit(3, 7),
];

test('a clean file replays to every record', () => {
  const { path } = writeLog(RECORDS);
  const storage = new FileLogStorage(path);
  const report = LoggerLogic.recover(storage, 'refuse-corruption');
  assert.equal(report.outcome, 'clean');
  assert.equal(report.records, RECORDS.length);
  assert.equal(report.epoch, 1);
  const replay = replayLog(scanLog(storage.readAll()).records);
  assert.deepEqual([...replay.clients].sort(), [
    [1, 2],
    [2, 1],
    [3, 7],
  ]);
  assert.equal(replay.commits.length, 4);
  assert.deepEqual(replay.commits[3]?.writes[0]?.value, bytes('v3.7'));
  storage.close();
});

test('a truncated file (torn last record) recovers up to the last valid record and says so', () => {
  const { path, ends } = writeLog(RECORDS);
  // Cut in the middle of the last record, at every kind of place: header, payload.
  for (const cut of [ends[3]! + 5, ends[3]! + LOG_HEADER_BYTES + 3, ends[4]! - 1]) {
    const copy = tempLog();
    writeFileSync(copy, readFileSync(path).subarray(0, cut));
    const storage = new FileLogStorage(copy);
    const report = LoggerLogic.recover(storage, 'refuse-corruption');
    assert.equal(report.outcome, 'torn-tail-discarded', `cut at ${cut}`);
    assert.equal(report.records, 4);
    assert.equal(report.validBytes, ends[3]);
    assert.equal(report.discardedBytes, cut - ends[3]!);
    assert.ok(
      report.damage === 'truncated-header' || report.damage === 'truncated-record',
      String(report.damage),
    );
    assert.match(describeLogRecovery(report), /discarded a torn tail of \d+ byte\(s\)/);
    // The torn bytes are gone from the file itself, so the next append follows a valid record.
    assert.equal(statSync(copy).size, ends[3]);
    storage.append(encodeLogRecord(commit(9, 9)));
    storage.sync();
    assert.equal(scanLog(storage.readAll()).records.length, 5);
    storage.close();
  }
});

test('a garbled last record (bad checksum, nothing valid after) is a torn tail too', () => {
  const { path, ends } = writeLog(RECORDS);
  const content = readFileSync(path);
  content[ends[4]! - 2] = content[ends[4]! - 2]! ^ 0x5a;
  writeFileSync(path, content);
  const storage = new FileLogStorage(path);
  const report = LoggerLogic.recover(storage, 'refuse-corruption');
  assert.equal(report.outcome, 'torn-tail-discarded');
  assert.equal(report.damage, 'bad-checksum');
  assert.equal(report.records, 4);
  storage.close();
});

test('damage in the middle with valid records after it is refused, naming the offset', () => {
  const { path, ends } = writeLog(RECORDS);
  const content = readFileSync(path);
  const offset = ends[1]! + LOG_HEADER_BYTES + 4; // inside the third record's payload
  content[offset] = content[offset]! ^ 0xff;
  writeFileSync(path, content);
  const storage = new FileLogStorage(path);
  assert.throws(
    () => LoggerLogic.recover(storage, 'refuse-corruption'),
    (error: unknown) => {
      assert.ok(error instanceof DtLogCorruptError);
      assert.ok(isIpipeError(error, 'IPIPE_ERR_DT_LOG_CORRUPT'));
      assert.equal(error.offset, ends[1]);
      assert.equal(error.reason, 'bad-checksum');
      assert.equal(error.recordsAfter, 2);
      assert.match(
        error.message,
        /corrupt at byte \d+ .* 2 valid record\(s\) follow.*discard-after-corruption/,
      );
      return true;
    },
  );
  // Refusing leaves the file untouched.
  assert.equal(statSync(path).size, ends[4]);
  // The operator may accept the loss explicitly; the report says what was lost.
  const report = LoggerLogic.recover(storage, 'discard-after-corruption');
  assert.equal(report.outcome, 'corruption-discarded');
  assert.equal(report.records, 2);
  assert.equal(report.recordsLost, 2);
  assert.match(describeLogRecovery(report), /DISCARDED \d+ byte\(s\) .* losing 2 valid record\(s\)/);
  assert.equal(statSync(path).size, ends[1]);
  storage.close();
});

test('a flipped length field is caught by the header checksum, not followed', () => {
  const records = [{ type: 'epoch', epoch: 3 } as const, commit(1, 1, 3)];
  const encoded = records.map(encodeLogRecord);
  const file = new Uint8Array(encoded[0]!.length + encoded[1]!.length);
  file.set(encoded[0]!);
  file.set(encoded[1]!, encoded[0]!.length);
  file[encoded[0]!.length + 4] = file[encoded[0]!.length + 4]! ^ 0x01; // length − 1 or + 1
  const scan = scanLog(file);
  assert.equal(scan.records.length, 1);
  assert.ok(scan.damage === 'bad-checksum' || scan.damage === 'truncated-record', String(scan.damage));
});

test('the logger over a real file: fsync before durable, epochs fence old appends, restart replays', () => {
  const path = tempLog();
  const open = () => {
    const storage = new FileLogStorage(path);
    const report = LoggerLogic.recover(storage, 'refuse-corruption');
    const logic = new LoggerLogic(storage, new MemoryCell<LoggerState>(initialLoggerState(report.epoch)), {
      groupCommitNs: 0,
      recovery: 'refuse-corruption',
    });
    return { storage, logic };
  };
  const first = open();
  const recovered = first.logic.handle({ type: 'log-recover', nonce: 11 }, 0);
  const answer = recovered[0];
  assert.ok(answer?.kind === 'send' && answer.message.type === 'log-recovered');
  assert.equal(answer.message.type === 'log-recovered' && answer.message.epoch, 1);

  const append = (client: number, seq: number, epoch: number): DtMsg<'log-append'> => ({
    type: 'log-append',
    client,
    seq,
    epoch,
    writes: [{ shard: 0, key: `k${client}`, value: bytes(`${client}:${seq}`), version: seq }],
  });
  // Group commit: two appends, one fsync covers both; durable only after the flush.
  const a = first.logic.handle(append(1, 1, 1), 0);
  const b = first.logic.handle(append(2, 1, 1), 0);
  assert.deepEqual(
    [...a, ...b].map((output) => output.kind),
    ['timer', 'timer'],
    'no log-durable before a flush',
  );
  const flushes = [...a, ...b].flatMap((output) => (output.kind === 'timer' ? [output.message] : []));
  const durable = flushes.flatMap((message) =>
    message.type === 'log-flush' ? first.logic.handle(message, 1) : [],
  );
  assert.deepEqual(
    durable.map((output) => (output.kind === 'send' ? output.message.type : output.kind)),
    ['log-durable', 'log-durable'],
  );
  first.storage.close();

  // A new incarnation: a new epoch is written before the answer, and it lists both commits.
  const second = open();
  const again = second.logic.handle({ type: 'log-recover', nonce: 12 }, 0)[0];
  assert.ok(again?.kind === 'send' && again.message.type === 'log-recovered');
  if (again.message.type !== 'log-recovered') return;
  assert.equal(again.message.epoch, 2);
  assert.deepEqual(
    again.message.pending.map((commit) => `${commit.client}:${commit.seq}@${commit.epoch}`),
    ['1:1@1', '2:1@1'],
  );
  // A retransmitted recover (same nonce) gets the same epoch, not another bump.
  const repeat = second.logic.handle({ type: 'log-recover', nonce: 12 }, 0)[0];
  assert.ok(repeat?.kind === 'send' && repeat.message.type === 'log-recovered' && repeat.message.epoch === 2);
  // An append still in flight from epoch 1 is fenced.
  const fenced = second.logic.handle(append(3, 1, 1), 0)[0];
  assert.ok(fenced?.kind === 'send' && fenced.message.type === 'log-rejected');
  assert.equal(replayLog(scanLog(second.storage.readAll()).records).commits.length, 2);

  // Checkpoint: finished commits leave the file, the clients' committed seqs stay.
  second.logic.handle(
    {
      type: 'log-checkpoint',
      epoch: 2,
      clients: [
        { client: 1, seq: 1 },
        { client: 2, seq: 1 },
      ],
      finished: [{ client: 1, seq: 1, epoch: 1 }],
    },
    0,
  );
  second.storage.close();
  const third = open();
  const replay = replayLog(scanLog(third.storage.readAll()).records);
  assert.equal(replay.epoch, 2);
  assert.deepEqual(
    replay.commits.map((c) => `${c.client}:${c.seq}`),
    ['2:1'],
  );
  assert.deepEqual([...replay.clients].sort(), [
    [1, 1],
    [2, 1],
  ]);
  third.storage.close();
});

test('an unusable log path fails with DtLogIoError saying what to check', () => {
  assert.throws(
    () => new FileLogStorage(join(directory, 'missing-dir', 'x.log')),
    (error: unknown) =>
      error instanceof DtLogIoError &&
      /open failed .*check the path, its permissions and free space/.test(error.message),
  );
});

test('the simulated disk keeps synced bytes and loses, keeps or garbles unsynced ones', () => {
  const disk = new MemoryLogStorage('t');
  disk.append(encodeLogRecord(commit(1, 1)));
  disk.sync();
  const synced = disk.size();
  disk.append(encodeLogRecord(commit(1, 2)));
  assert.equal(disk.unsyncedBytes, disk.size() - synced);
  let seenLoss = false;
  for (let seed = 1; seed <= 20 && !seenLoss; seed++) {
    const copy = new MemoryLogStorage('c');
    copy.append(disk.readAll().subarray(0, synced));
    copy.sync();
    copy.append(disk.readAll().subarray(synced));
    const report = copy.crash(new Random(seed));
    assert.ok(copy.size() >= synced, 'synced bytes survive a crash');
    assert.equal(report.unsyncedBytes, disk.size() - synced);
    seenLoss ||= report.keptBytes < report.unsyncedBytes;
  }
  assert.ok(seenLoss, 'some crash lost unsynced bytes');
});
