/**
 * Tuples per request grow with packet size (iPipe §5 workloads; src/apps/rta/tuple.ts and
 * workload.ts): requests fill the packet, keep event-time order, lose nothing, and the endless
 * stream packs exactly as the finite request list does.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  packTuples,
  RTA_PACKET_SIZES,
  requestFrameBytes,
  rtaWorkload,
  TweetGenerator,
} from '../../../src/apps/rta/index.ts';

const SEED = 7;

test('requests fill the packet: 1 tuple at 64 B, more at each larger size; order kept, nothing lost', (t) => {
  const tuples = new TweetGenerator({ seed: SEED }).take(5_000);
  const means: number[] = [];
  for (const packetBytes of RTA_PACKET_SIZES) {
    const batches = packTuples(tuples, packetBytes);
    assert.deepEqual(batches.flat(), tuples, `${packetBytes} B: every tuple, in order`);
    for (const batch of batches) {
      assert.ok(batch.length >= 1);
      assert.ok(
        batch.length === 1 || requestFrameBytes(batch) <= packetBytes,
        `${packetBytes} B: a batch of ${batch.length} takes ${requestFrameBytes(batch)} B`,
      );
    }
    // Full: all but the last batch would overflow with the next tuple.
    for (let i = 0; i + 1 < batches.length; i++) {
      const withNext = [...batches[i]!, batches[i + 1]![0]!];
      assert.ok(requestFrameBytes(withNext) > packetBytes);
    }
    means.push(tuples.length / batches.length);
  }
  t.diagnostic(
    `seed ${SEED}: tuples per request at ${RTA_PACKET_SIZES.join('/')} B = ${means.map((m) => m.toFixed(2)).join(', ')}`,
  );
  assert.equal(means[0], 1);
  for (let i = 1; i < means.length; i++) assert.ok(means[i]! > means[i - 1]!);
});

test('the endless stream packs as requests() does, round-robin over the filters, each in time order', () => {
  const workload = rtaWorkload({ config: { filters: 3 }, packetBytes: 512, seed: SEED });
  const stream = workload.stream();
  const streamed = Array.from({ length: 200 }, () => stream.next());
  const tuples = streamed.flatMap((r) => (r.message.type === 'ingest' ? r.message.tuples : []));
  assert.equal(stream.tuplesSent, tuples.length);
  const listed = workload.requests(tuples);
  assert.deepEqual(
    streamed.map((r) => [r.instance, r.tuples, r.packetBytes]),
    listed.map((r) => [r.instance, r.tuples, r.packetBytes]),
  );
  assert.deepEqual(
    streamed.slice(0, 4).map((r) => r.instance),
    ['rta-filter-0', 'rta-filter-1', 'rta-filter-2', 'rta-filter-0'],
  );
  for (const filter of workload.instances.filters) {
    const times = streamed
      .filter((r) => r.instance === filter)
      .flatMap((r) => (r.message.type === 'ingest' ? r.message.tuples.map((x) => x.timestampMs) : []));
    for (let i = 1; i < times.length; i++) assert.ok(times[i]! >= times[i - 1]!);
  }
  // requests() sorts a user's out-of-order file by event time first; nothing is lost.
  const shuffled = [...tuples].reverse();
  const sorted = workload
    .requests(shuffled)
    .flatMap((r) => (r.message.type === 'ingest' ? r.message.tuples : []));
  assert.equal(sorted.length, tuples.length);
  for (let i = 1; i < sorted.length; i++) assert.ok(sorted[i]!.timestampMs >= sorted[i - 1]!.timestampMs);
  assert.deepEqual(new Set(sorted), new Set(tuples));
});
