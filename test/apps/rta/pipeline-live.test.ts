/**
 * RTA on the live node (issue 6, section 3): worker threads as NIC and host cores, a UDP client,
 * the counters' windows closed by real timers. Per window the counts and top n equal the
 * reference computation, both without and with the ranker migrated NIC → host (and back) in the
 * middle of the stream — the migration moves its DMO region, rankings objects included.
 * Kept small: starting a node costs a worker thread per core.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rtaWorkload } from '../../../src/apps/rta/index.ts';
import { assertMatchesReference, assertNothingLate, LiveRta, readReported } from './harness.ts';

const CONFIG = { window: { windowMs: 2_000, slideMs: 500, latenessMs: 2_000, tickMs: 2 } } as const;

test('live node, no migration: every window equals the reference', async () => {
  const workload = rtaWorkload({ config: CONFIG, packetBytes: 1024, seed: 31 });
  const tuples = workload.generator().takeUntil(4_000);
  const requests = workload.requests(tuples);
  const rta = await LiveRta.start(workload);
  try {
    for (const send of workload.setup) await rta.call(send.instance, send.message);
    assert.equal(await rta.stream(requests, 4), requests.length);
    for (const send of workload.finish) await rta.call(send.instance, send.message);
    await rta.settle();
    assertMatchesReference(await readReported(rta.call, workload), workload.reference(tuples));
    await assertNothingLate(rta.call, workload);
    assert.ok(rta.node.stats().migrations.length === 0, 'nothing migrated');
  } finally {
    await rta.stop();
  }
});

test('live node, the ranker migrated to the host and back mid-stream: identical results', async () => {
  const workload = rtaWorkload({ config: { ...CONFIG, rankers: 1 }, packetBytes: 512, seed: 31 });
  const tuples = workload.generator().takeUntil(4_000);
  const requests = workload.requests(tuples);
  const rta = await LiveRta.start(workload);
  try {
    for (const send of workload.setup) await rta.call(send.instance, send.message);
    const ranker = rta.id('rta-ranker-0');
    const third = Math.floor(requests.length / 3);
    const moves: Promise<unknown>[] = [];
    await rta.stream(requests, 4, async (sent) => {
      if (sent === third) moves.push(rta.node.migrate(ranker, 'host'));
      if (sent === 2 * third) {
        await Promise.all(moves);
        assert.equal(rta.node.domainOf(ranker), 'host');
        moves.push(rta.node.migrate(ranker, 'nic'));
      }
    });
    await Promise.all(moves);
    for (const send of workload.finish) await rta.call(send.instance, send.message);
    await rta.settle();
    assertMatchesReference(await readReported(rta.call, workload), workload.reference(tuples));
    await assertNothingLate(rta.call, workload);
    const stats = rta.node.stats();
    assert.deepEqual(
      stats.migrations.map((m) => `${m.to}`),
      ['host', 'nic'],
      'the ranker went to the host and came back',
    );
    const ran = stats.executed['rta-ranker-0'];
    assert.ok(ran && ran.nic > 0 && ran.host > 0, `the ranker ran on both sides: ${JSON.stringify(ran)}`);
  } finally {
    await rta.stop();
  }
});
