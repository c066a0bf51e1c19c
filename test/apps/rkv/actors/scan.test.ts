/**
 * SCAN through RKV's actors on the simulator (messages.ts "SCAN", storage-actors.ts): the leader's
 * memtable collects its part of the range (active and frozen memtables, tombstones included) and
 * the SSTable reader merges it over the disk's range (base data, level 0, level 1):
 *
 *   model       after random puts and deletes (base keys and new ones, through flushes and level-0
 *               merges) every scan, page by page with random limits and page bytes, returns the
 *               model's live pairs of its range in key order, each exactly once
 *   tombstones  a key deleted in the memtable hides its flushed and base values; a flushed delete
 *               hides the base value; an overwrite in the memtable shadows the flushed value
 *   pages       `limit` pairs per page with `next` the first key left out; a byte bound of one
 *               pair; a memtable full of tombstones cuts the page early (empty, not done) and the
 *               scan still ends
 *   refused     a follower refuses a scan and names the leader (a lease read, as a get)
 *   hold        a scan while every write flushes sees each key once, in order
 *   bounds      the largest pages (the biggest pairs, or `limit` tiny ones) encode in one datagram
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ActorRef } from '../../../../src/actor/index.ts';
import {
  MAX_KEY_BYTES,
  MAX_SCAN_LIMIT,
  MAX_SCAN_PAGE_BYTES,
  MAX_VALUE_BYTES,
  type RkvMessage,
  type RkvMsg,
  rkvKey,
  rkvKeyIndex,
  rkvMessages,
  SCAN_PAIR_OVERHEAD_BYTES,
} from '../../../../src/apps/rkv/actors/messages.ts';
import type { RkvSimDeployment } from '../../../../src/apps/rkv/actors/sim-deployment.ts';
import { baseValue, encodeRun } from '../../../../src/apps/rkv/actors/sim-disk.ts';
import { scanStepBudget } from '../../../../src/apps/rkv/actors/storage-actors.ts';
import { Random } from '../../../../src/random.ts';
import { BASE_KEYS, call, deployGroup, memtableBytes, VALUE_BYTES } from './helpers.ts';

type Ref = ActorRef<RkvMessage, RkvMessage>;
const SEED = Number(process.env['IPIPE_TEST_SEED'] ?? 20261122);
process.stderr.write(`rkv scan seed ${SEED} (IPIPE_TEST_SEED=${SEED} reproduces)\n`);
const EMPTY = new Uint8Array(0);

function page(d: RkvSimDeployment, at: number, message: RkvMsg<'scan'>): RkvMsg<'scan-page'> {
  const answer = call(d, at, d.consensus[at] as Ref, message);
  assert.equal(answer.type, 'scan-page', JSON.stringify(answer));
  return answer as RkvMsg<'scan-page'>;
}

/** Every page of a scan at the leader; the pairs as [index, value], and the pages taken. */
function scanAll(
  d: RkvSimDeployment,
  start: Uint8Array,
  end: Uint8Array,
  limit: number,
  maxBytes = 0,
): { pairs: [number, Uint8Array][]; pages: number } {
  const pairs: [number, Uint8Array][] = [];
  let from = start;
  for (let pages = 1; pages < 10_000; pages++) {
    const got = page(d, d.leader, { type: 'scan', start: from, end, limit, maxBytes });
    assert.ok(got.pairs.length <= limit, `page of ${got.pairs.length} pairs over limit ${limit}`);
    for (const pair of got.pairs) pairs.push([rkvKeyIndex(pair.key) as number, pair.value]);
    if (got.done) return { pairs, pages };
    assert.ok(Buffer.compare(got.next, from) > 0, 'a page moves the scan on');
    from = got.next;
  }
  assert.fail('the scan never ended');
}

/** The model's live pairs with index in [from, to), in key order. */
function modelRange(model: Map<number, Uint8Array | null>, from: number, to: number): [number, Uint8Array][] {
  const out: [number, Uint8Array][] = [];
  for (let index = from; index < to; index++) {
    const value = model.has(index)
      ? model.get(index)
      : index < BASE_KEYS
        ? baseValue(index, VALUE_BYTES)
        : null;
    if (value !== null && value !== undefined) out.push([index, value]);
  }
  return out;
}

function put(d: RkvSimDeployment, index: number, fill: number): Uint8Array {
  const value = new Uint8Array(VALUE_BYTES).fill(fill);
  const answer = call(d, d.leader, d.consensus[d.leader] as Ref, {
    type: 'put',
    clientId: 0,
    seq: 0,
    key: rkvKey(index),
    value,
  });
  assert.equal(answer.type, 'put-ok');
  return value;
}

function del(d: RkvSimDeployment, index: number): void {
  const answer = call(d, d.leader, d.consensus[d.leader] as Ref, {
    type: 'del',
    clientId: 0,
    seq: 0,
    key: rkvKey(index),
  });
  assert.equal(answer.type, 'del-ok');
}

test(`scans at the leader equal the model's ranges through puts, deletes, flushes and merges (seed ${SEED})`, () => {
  const d = deployGroup();
  const random = new Random(SEED, 'scan-model');
  // key index → value, or null when deleted; absent: as the base data has it.
  const model = new Map<number, Uint8Array | null>();
  const low = BASE_KEYS - 60;
  const high = BASE_KEYS + 60;
  let scans = 0;
  let multiPage = 0;
  for (let i = 0; i < 400; i++) {
    const index = random.int(low, high);
    if (random.chance(0.6)) model.set(index, put(d, index, i % 256));
    else {
      del(d, index);
      model.set(index, null);
    }
    if (i % 20 !== 19) continue;
    const from = random.int(low - 10, high);
    const bounded = random.chance(0.7);
    const to = bounded ? from + random.int(1, 100) : Number.POSITIVE_INFINITY;
    const limit = random.chance(0.2) ? MAX_SCAN_LIMIT : random.int(1, 30);
    const maxBytes = random.chance(0.3) ? random.int(1, 200) : 0;
    const got = scanAll(d, rkvKey(from), bounded ? rkvKey(to) : EMPTY, limit, maxBytes);
    const want = modelRange(model, from, Math.min(to, high + 1));
    assert.deepEqual(
      got.pairs.map(([index, value]) => [index, [...value]]),
      want.map(([index, value]) => [index, [...value]]),
      `scan #${scans} [${from}, ${to}) limit ${limit} maxBytes ${maxBytes}`,
    );
    scans++;
    if (got.pages > 1) multiPage++;
  }
  assert.equal(scans, 20);
  assert.ok(multiPage >= 5, `scans over several pages: ${multiPage}`);
  const disk = d.disks[d.leader]!;
  assert.ok(disk.tablesWritten >= 3, `tables written: ${disk.tablesWritten}`);
  assert.ok(disk.level0Tables < disk.tablesWritten, 'level 0 was merged into level 1');
});

test('tombstones hide flushed and base values; a memtable overwrite shadows the flushed value', () => {
  const d = deployGroup({ memtableLimitBytes: 1024 * 1024 });
  const disk = d.disks[d.leader]!;
  const value = (fill: number) => new Uint8Array(VALUE_BYTES).fill(fill);
  // A level-0 table as a flush would have written it: two new keys, a delete of base key 3.
  disk.writeLevel0(
    encodeRun([
      { key: rkvKey(3), value: undefined },
      { key: rkvKey(BASE_KEYS + 1), value: value(1) },
      { key: rkvKey(BASE_KEYS + 2), value: value(2) },
      { key: rkvKey(BASE_KEYS + 4), value: value(4) },
    ]),
  );
  // In the memtable only: a delete of a flushed key and of a base key, an overwrite, a new key.
  del(d, BASE_KEYS + 1);
  put(d, BASE_KEYS + 2, 9);
  del(d, 7);
  put(d, BASE_KEYS + 5, 5);
  assert.equal(disk.level0Tables, 1, 'nothing flushed meanwhile');
  const pairs = scanAll(d, rkvKey(0), EMPTY, MAX_SCAN_LIMIT).pairs;
  const indices = pairs.map(([index]) => index);
  const want = [...Array.from({ length: BASE_KEYS }, (_, i) => i).filter((i) => i !== 3 && i !== 7)];
  want.push(BASE_KEYS + 2, BASE_KEYS + 4, BASE_KEYS + 5);
  assert.deepEqual(indices, want);
  const firstByteOf = (index: number) => pairs.find(([i]) => i === index)?.[1][0];
  assert.equal(firstByteOf(BASE_KEYS + 2), 9, 'the memtable value shadows the flushed one');
  assert.equal(firstByteOf(BASE_KEYS + 4), 4);
  assert.equal(firstByteOf(10), baseValue(10, VALUE_BYTES)[0]);
});

test('pages: limit and next, a byte bound of one pair, an early cut by memtable tombstones', () => {
  const d = deployGroup({ memtableLimitBytes: 1024 * 1024 });
  const first = page(d, d.leader, {
    type: 'scan',
    start: rkvKey(10),
    end: rkvKey(20),
    limit: 3,
    maxBytes: 0,
  });
  assert.deepEqual(
    first.pairs.map((pair) => rkvKeyIndex(pair.key)),
    [10, 11, 12],
  );
  assert.equal(first.done, false);
  assert.equal(rkvKeyIndex(first.next), 13, 'next: the first key left out');
  const last = page(d, d.leader, { type: 'scan', start: rkvKey(18), end: rkvKey(20), limit: 3, maxBytes: 0 });
  assert.deepEqual(
    last.pairs.map((pair) => rkvKeyIndex(pair.key)),
    [18, 19],
  );
  assert.equal(last.done, true);
  // A byte bound below one pair: still one pair per page.
  const one = page(d, d.leader, { type: 'scan', start: rkvKey(10), end: EMPTY, limit: 100, maxBytes: 1 });
  assert.equal(one.pairs.length, 1);
  assert.equal(rkvKeyIndex(one.next), 11);
  // 40 deletes in the memtable: its part of a page of 200 bytes stops after a few tombstones, so
  // the page is empty but not done; the scan still reaches the live keys after them.
  for (let i = 100; i < 140; i++) del(d, i);
  const cut = page(d, d.leader, { type: 'scan', start: rkvKey(100), end: EMPTY, limit: 10, maxBytes: 200 });
  assert.deepEqual(cut.pairs, []);
  assert.equal(cut.done, false);
  assert.ok((rkvKeyIndex(cut.next) as number) > 100 && (rkvKeyIndex(cut.next) as number) < 140);
  const rest = scanAll(d, rkvKey(100), rkvKey(145), 10, 200);
  assert.deepEqual(
    rest.pairs.map(([index]) => index),
    [140, 141, 142, 143, 144],
  );
  assert.ok(rest.pages > 3, `pages: ${rest.pages}`);
  // An empty range, and a range past every key.
  assert.equal(
    page(d, d.leader, { type: 'scan', start: rkvKey(5), end: rkvKey(5), limit: 5, maxBytes: 0 }).done,
    true,
  );
  const past = page(d, d.leader, {
    type: 'scan',
    start: rkvKey(BASE_KEYS),
    end: EMPTY,
    limit: 5,
    maxBytes: 0,
  });
  assert.deepEqual([past.pairs.length, past.done], [0, true]);
});

test('a follower refuses a scan and names the leader', () => {
  const d = deployGroup();
  const follower = (d.leader + 1) % 3;
  const answer = call(d, follower, d.consensus[follower] as Ref, {
    type: 'scan',
    start: EMPTY,
    end: EMPTY,
    limit: 10,
    maxBytes: 0,
  });
  assert.equal(answer.type, 'refused', JSON.stringify(answer));
  if (answer.type === 'refused') assert.equal(answer.leader, d.leader);
});

/** When the hold test's scan leaves: 20 µs after the 9th round of writes, while they commit. */
const SCAN_AFTER_NS = 20_000;
test('a scan while every write flushes sees each key once, in order, and every write answered before it', () => {
  // A 1-byte memtable: every write freezes the memtable and sends a flush.
  const d = deployGroup({ memtableLimitBytes: 1 });
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  for (let i = 0; i < 6; i++) put(d, BASE_KEYS + i, i);
  let scanned: RkvMessage | undefined;
  for (let i = 6; i < 12; i++) {
    const value = new Uint8Array(VALUE_BYTES).fill(i);
    d.cluster.clientSend(
      leader,
      consensus,
      { type: 'put', clientId: 0, seq: 0, key: rkvKey(BASE_KEYS + i), value },
      () => {},
    );
    // Overwrites of base keys: each must appear once whether it sits in a memtable or on disk.
    d.cluster.clientSend(
      leader,
      consensus,
      { type: 'put', clientId: 0, seq: 0, key: rkvKey(i), value },
      () => {},
    );
    if (i === 8) {
      // Sent a while after the writes so far, while they are committing: it sees some of them.
      d.cluster.kernel.after(SCAN_AFTER_NS, () =>
        d.cluster.clientSend(
          leader,
          consensus,
          { type: 'scan', start: EMPTY, end: EMPTY, limit: MAX_SCAN_LIMIT, maxBytes: 0 },
          (_id, _latency, ok, reply) => {
            assert.ok(ok);
            scanned = reply as RkvMessage;
          },
        ),
      );
    }
  }
  d.cluster.kernel.run({});
  assert.ok(scanned?.type === 'scan-page' && scanned.done, JSON.stringify(scanned));
  const indices = scanned.pairs.map((pair) => rkvKeyIndex(pair.key) as number);
  assert.deepEqual(
    indices,
    [...new Set(indices)].sort((a, b) => a - b),
    'each key once, in order',
  );
  const fresh = indices.filter((index) => index >= BASE_KEYS).length;
  assert.ok(fresh >= 6 && fresh <= 12, `${fresh} new keys seen; 6 were answered before the scan`);
  assert.equal(indices.length, BASE_KEYS + fresh);
  // The page is one point of the log: the writes it shows are a prefix of the order they were
  // sent in, each with its value; the rest show what was there before (nothing, the base value).
  const got = new Map(scanned.pairs.map((pair) => [rkvKeyIndex(pair.key) as number, pair.value]));
  for (let i = 0; i < 6; i++)
    assert.deepEqual(got.get(BASE_KEYS + i), new Uint8Array(VALUE_BYTES).fill(i), `answered put ${i}`);
  const writes: [index: number, fill: number][] = [];
  for (let i = 6; i < 12; i++) writes.push([BASE_KEYS + i, i], [i, i]);
  const seen = writes.map(([index, i]) => {
    const value = got.get(index);
    if (value !== undefined && Buffer.from(value).equals(Buffer.alloc(VALUE_BYTES, i))) return true;
    const before = index >= BASE_KEYS ? undefined : baseValue(index, VALUE_BYTES);
    assert.deepEqual(value, before, `key ${index}: neither its write's value nor the one before`);
    return false;
  });
  const prefix = seen.indexOf(false) < 0 ? seen.length : seen.indexOf(false);
  assert.deepEqual(
    seen,
    writes.map((_, n) => n < prefix),
    `writes seen, in write order: ${seen}`,
  );
  // Not a bound on the answer: the scan is timed to land among the writes, or this checks little.
  assert.ok(prefix > 0 && prefix < writes.length, `the scan saw ${prefix} of the ${writes.length} writes`);
  assert.ok(d.disks[leader]!.tablesWritten > 6, `tables written: ${d.disks[leader]!.tablesWritten}`);
  const final = scanAll(d, EMPTY, EMPTY, MAX_SCAN_LIMIT).pairs;
  assert.equal(final.length, BASE_KEYS + 12);
});

test('a page over a long run of tombstones on disk ends at its step budget with a next that moves on', () => {
  const baseKeys = 3000;
  const d = deployGroup({ baseKeys });
  // Tombstones of base keys 0 … 2499 on the leader's disk (as flushed deletes would leave them).
  const tombstones = Array.from({ length: 2500 }, (_, i) => ({ key: rkvKey(i), value: undefined }));
  d.disks[d.leader]!.writeLevel0(encodeRun(tombstones));
  const limit = 10;
  const first = page(d, d.leader, { type: 'scan', start: EMPTY, end: EMPTY, limit, maxBytes: 0 });
  assert.equal(first.done, false);
  assert.equal(first.pairs.length, 0, 'the budget ran out among the tombstones');
  assert.deepEqual(first.next, rkvKey(scanStepBudget(limit)), 'the next page starts where the read stopped');
  const all = scanAll(d, EMPTY, EMPTY, limit);
  assert.deepEqual(
    all.pairs.map(([index]) => index),
    Array.from({ length: 500 }, (_, i) => 2500 + i),
    'exactly the live keys',
  );
  for (const [index, value] of all.pairs) assert.deepEqual(value, baseValue(index, VALUE_BYTES));
  assert.ok(all.pages >= 50 + 2, `pages: ${all.pages}`);
});

test('closed-loop scanners do not starve flushes: the memtable stays within a few times its limit', () => {
  // Two scanners back to back keep a hold out at every moment; before holds had epochs the
  // memtable never flushed again (600 KB in NIC memory at a 4 KiB limit).
  const limitBytes = 4096;
  const d = deployGroup({ baseKeys: 0, memtableLimitBytes: limitBytes, level0Trigger: 4 });
  const leader = d.leader;
  const consensus = d.consensus[leader] as Ref;
  const kernel = d.cluster.kernel;
  const stopAt = kernel.now() + 10_000_000;
  let puts = 0;
  let scans = 0;
  const writer = (): void => {
    if (kernel.now() > stopAt) return;
    const key = rkvKey(puts++);
    d.cluster.clientSend(
      leader,
      consensus,
      { type: 'put', clientId: 0, seq: 0, key, value: new Uint8Array(100) },
      writer,
    );
  };
  const scanner = (): void => {
    if (kernel.now() > stopAt) return;
    scans++;
    d.cluster.clientSend(
      leader,
      consensus,
      { type: 'scan', start: EMPTY, end: EMPTY, limit: 4, maxBytes: 0 },
      scanner,
    );
  };
  writer();
  scanner();
  scanner();
  let most = 0;
  while (kernel.now() < stopAt) {
    kernel.run({ untilNs: kernel.now() + 250_000 });
    most = Math.max(most, memtableBytes(d, leader));
  }
  kernel.run({});
  assert.ok(scans > 100 && puts > 100, `scans ${scans}, puts ${puts}`);
  assert.ok(most <= 3 * limitBytes, `memtables held ${most} bytes at most (limit ${limitBytes})`);
  assert.ok(
    d.disks[leader]!.tablesWritten >= puts / 60,
    `tables written: ${d.disks[leader]!.tablesWritten} for ${puts} puts`,
  );
});

test('the largest pages encode within one 65 000-byte datagram (the bound counts what the codec writes)', () => {
  const fill = (limitPairs: number, keyBytes: number, valueBytes: number) => {
    const pairs: { key: Uint8Array; value: Uint8Array }[] = [];
    let bytes = 0;
    for (;;) {
      const size = keyBytes + valueBytes + SCAN_PAIR_OVERHEAD_BYTES;
      if (pairs.length >= limitPairs || (pairs.length > 0 && bytes + size > MAX_SCAN_PAGE_BYTES)) break;
      pairs.push({ key: new Uint8Array(keyBytes).fill(0x6b), value: new Uint8Array(valueBytes) });
      bytes += size;
    }
    return { pairs, bytes };
  };
  for (const [keyBytes, valueBytes] of [
    [MAX_KEY_BYTES, MAX_VALUE_BYTES],
    [MAX_KEY_BYTES, 1000],
    [1, 0],
    [16, 24],
  ] as const) {
    const { pairs, bytes } = fill(MAX_SCAN_LIMIT, keyBytes, valueBytes);
    const encoded = rkvMessages.encode({
      type: 'scan-page',
      pairs,
      done: false,
      next: new Uint8Array(MAX_KEY_BYTES),
    });
    assert.ok(
      encoded.length <= bytes + 256,
      `${pairs.length} pairs of ${keyBytes}+${valueBytes} bytes: ${encoded.length} encoded, ${bytes} counted`,
    );
    assert.ok(encoded.length + 512 < 65_000, `${encoded.length} bytes leave room for the frame's headers`);
  }
});
