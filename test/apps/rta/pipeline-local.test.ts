/**
 * RTA on the in-process LocalRuntime (issue 6, section 3): per window, the counts (total and
 * distinct keys) and the top n the aggregating ranker reports equal a straightforward reference
 * computation over the same tuples and windows — with one or several filters, with the ranker
 * relocated (its DMOs snapshotted and restored, migration's state half) mid-stream, and with late
 * tuples counted and dropped rather than changing an emitted window.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RtaWorkload, rtaWorkload } from '../../../src/apps/rta/index.ts';
import type { RtaTuple } from '../../../src/apps/rta/tuple.ts';
import { assertMatchesReference, assertNothingLate, LocalRta, readReported } from './harness.ts';

async function runLocal(
  workload: RtaWorkload,
  tuples: readonly RtaTuple[],
  midStream?: (rta: LocalRta) => void,
): Promise<LocalRta> {
  const rta = new LocalRta(workload);
  for (const send of workload.setup) rta.callNow(send.instance, send.message);
  const requests = workload.requests(tuples);
  requests.forEach((request, index) => {
    rta.callNow(request.instance, request.message);
    rta.advanceMs(1);
    if (index === Math.floor(requests.length / 2)) midStream?.(rta);
  });
  for (const send of workload.finish) rta.callNow(send.instance, send.message);
  rta.advanceMs(50);
  return rta;
}

test('a small hashtag set: every window’s full counts and its top n equal the reference', async () => {
  // 12 hashtags and n = 20: the top n holds every key, so the whole count table is compared.
  const workload = rtaWorkload({
    config: { topN: 20, window: { windowMs: 3_000, slideMs: 500, latenessMs: 0, tickMs: 1 } },
    packetBytes: 512,
    seed: 11,
    generator: { hashtags: 12, tuplesPerSecond: 400 },
  });
  const tuples = workload.generator().takeUntil(15_000);
  const rta = await runLocal(workload, tuples);
  const reference = workload.reference(tuples);
  assert.ok(
    reference.every((w) => w.top.length === w.distinctKeys),
    'the top n covers every key',
  );
  assertMatchesReference(await readReported(rta.call, workload), reference);
  await assertNothingLate(rta.call, workload);
});

test('1000 drifting hashtags over two counters and two rankers: top 10 per window equals the reference', async () => {
  const workload = rtaWorkload({
    config: { window: { windowMs: 5_000, slideMs: 1_000, latenessMs: 0, tickMs: 1 } },
    packetBytes: 1024,
    seed: 5,
  });
  const tuples = workload.generator().takeUntil(30_000);
  const rta = await runLocal(workload, tuples);
  const reference = workload.reference(tuples);
  assert.equal(reference.length, 34, 'windows ending at 1 s … 34 s');
  assertMatchesReference(await readReported(rta.call, workload), reference);
  await assertNothingLate(rta.call, workload);
});

test('the rankers relocated mid-stream (snapshot and restore of their DMOs): identical results', async () => {
  const workload = rtaWorkload({
    config: { window: { windowMs: 4_000, slideMs: 1_000, latenessMs: 0, tickMs: 1 }, rankers: 3 },
    packetBytes: 256,
    seed: 8,
  });
  const tuples = workload.generator().takeUntil(12_000);
  let relocated = 0;
  const rta = await runLocal(workload, tuples, (local) => {
    for (const ranker of workload.instances.rankers) {
      const before = local.runtime.instance(local.ref(ranker).id).heap.stats().liveObjects;
      local.runtime.relocate(local.ref(ranker).id);
      assert.equal(local.runtime.instance(local.ref(ranker).id).heap.stats().liveObjects, before);
      relocated++;
    }
  });
  assert.equal(relocated, 3);
  assertMatchesReference(await readReported(rta.call, workload), workload.reference(tuples));
  await assertNothingLate(rta.call, workload);
});

test('two filters round-robin into three counters: results equal the reference', async () => {
  const workload = rtaWorkload({
    config: {
      filters: 2,
      counters: 3,
      rankers: 2,
      // Round-robin over two sources: a source may run a request ahead of the other.
      window: { windowMs: 4_000, slideMs: 1_000, latenessMs: 500, tickMs: 1 },
      filter: { pattern: '\\b(?:game|music|vote)\\b', mode: 'keep-matching' },
    },
    packetBytes: 512,
    seed: 21,
  });
  const tuples = workload.generator().takeUntil(10_000);
  const requests = workload.requests(tuples);
  assert.deepEqual(new Set(requests.map((r) => r.instance)), new Set(['rta-filter-0', 'rta-filter-1']));
  const rta = await runLocal(workload, tuples);
  const reference = workload.reference(tuples);
  const kept = reference.reduce((sum, w) => sum + w.totalCount, 0);
  assert.ok(kept > 0, 'the keep-matching filter keeps some tuples');
  assertMatchesReference(await readReported(rta.call, workload), reference);
  await assertNothingLate(rta.call, workload);
});

test('a tuple older than a closed window is counted as late and changes nothing', async () => {
  const workload = rtaWorkload({
    config: {
      counters: 1,
      rankers: 1,
      window: { windowMs: 2_000, slideMs: 1_000, latenessMs: 0, tickMs: 1 },
    },
    packetBytes: 1024,
  });
  const tuple = (timestampMs: number, hashtag: string): RtaTuple => ({
    timestampMs,
    userId: 1,
    hashtag,
    text: `hello ${hashtag}`,
  });
  const rta = new LocalRta(workload);
  for (const send of workload.setup) rta.callNow(send.instance, send.message);
  const onTime = [tuple(100, '#a'), tuple(1_500, '#b'), tuple(2_500, '#a'), tuple(5_000, '#c')];
  rta.callNow('rta-filter-0', { type: 'ingest', tuples: onTime });
  rta.advanceMs(5); // the tick closes the windows ending at 1, 2, 3 and 4 s... and 5 s
  const late = [tuple(1_200, '#late')];
  const reply = rta.callNow('rta-filter-0', { type: 'ingest', tuples: late });
  assert.deepEqual(reply, { type: 'ingested', received: 1, passed: 1 }, 'the filter passes it on');
  for (const send of workload.finish) rta.callNow(send.instance, send.message);
  rta.advanceMs(5);
  const stats = rta.callNow('rta-counter-0', { type: 'stats' }) as { late: number; counted: number };
  assert.equal(stats.late, 1);
  assert.equal(stats.counted, 4);
  assertMatchesReference(await readReported(rta.call, workload), workload.reference(onTime));
});

test('a window is pending until every source has passed it, then complete', () => {
  const workload = rtaWorkload({
    config: {
      filters: 2,
      counters: 1,
      rankers: 1,
      window: { windowMs: 1_000, slideMs: 1_000, latenessMs: 0, tickMs: 1 },
    },
  });
  const rta = new LocalRta(workload);
  for (const send of workload.setup) rta.callNow(send.instance, send.message);
  rta.callNow('rta-filter-0', {
    type: 'ingest',
    tuples: [
      { timestampMs: 10, userId: 0, hashtag: '#x', text: '#x' },
      { timestampMs: 3_000, userId: 0, hashtag: '#y', text: '#y' },
    ],
  });
  rta.advanceMs(5);
  const query = () =>
    rta.callNow('rta-aggregator', { type: 'query', windowEndMs: 1_000 }) as {
      state: string;
      totalCount: number;
    };
  assert.equal(query().state, 'pending', 'filter 1 has not moved past 1 s yet');
  rta.callNow('rta-filter-1', { type: 'advance', watermarkMs: 1_000 });
  rta.advanceMs(5);
  assert.deepEqual(query(), {
    type: 'ranking',
    windowEndMs: 1_000,
    state: 'complete',
    totalCount: 1,
    distinctKeys: 1,
    entries: [{ key: '#x', count: 1 }],
  });
});
