/**
 * RTA on the simulated LiquidIO CN2350 node (issue 6, sections 2 and 3): the actors really run on
 * simulated NIC and host cores, and per window the counts and top n equal the reference
 * computation — with the rankers forced to the host and back mid-stream, and with the hybrid
 * scheduler free to migrate whatever it likes. (The scheduler pushing the ranker by itself is
 * scheduler-migration.test.ts.)
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { rtaWorkload } from '../../../src/apps/rta/index.ts';
import { assertMatchesReference, assertNothingLate, readReported, SimRta } from './harness.ts';

test('rankers forced to the host and back mid-stream: results equal the reference, no request lost', async () => {
  const workload = rtaWorkload({
    config: { window: { windowMs: 5_000, slideMs: 1_000, latenessMs: 2_000, tickMs: 1 } },
    packetBytes: 1024,
    seed: 4,
  });
  const sim = new SimRta(workload, { scheduler: { enableMigration: false, enableDowngrade: false } });
  for (const send of workload.setup) await sim.call(send.instance, send.message);
  const tuples = workload.generator().takeUntil(20_000);
  const requests = workload.requests(tuples);
  const rankers = workload.instances.rankers.map((name) => sim.ref(name).id);
  const outcome = sim.stream(requests, 4, (sent) => {
    if (sent === Math.floor(requests.length / 3)) for (const id of rankers) sim.node.migrate(id, 'host');
    if (sent === Math.floor((2 * requests.length) / 3)) for (const id of rankers) sim.node.migrate(id, 'nic');
  });
  assert.deepEqual(outcome, { answered: requests.length, refused: 0 });
  const moves = sim.node.migrations.filter((m) => m.name.startsWith('rta-ranker'));
  assert.deepEqual(moves.map((m) => `${m.name} ${m.from}→${m.to}`).sort(), [
    'rta-ranker-0 host→nic',
    'rta-ranker-0 nic→host',
    'rta-ranker-1 host→nic',
    'rta-ranker-1 nic→host',
  ]);
  assert.ok(
    moves.every((m) => m.stateBytes > 0),
    'each migration moved the ranker’s DMOs',
  );
  for (const send of workload.finish) await sim.call(send.instance, send.message);
  assertMatchesReference(await readReported(sim.call, workload), workload.reference(tuples));
  await assertNothingLate(sim.call, workload);
});

test('the hybrid scheduler migrating freely (downgrades, pushes): results still equal the reference', async () => {
  const workload = rtaWorkload({
    config: { window: { windowMs: 5_000, slideMs: 1_000, latenessMs: 2_000, tickMs: 1 } },
    packetBytes: 512,
    seed: 9,
  });
  const sim = new SimRta(workload);
  for (const send of workload.setup) await sim.call(send.instance, send.message);
  const tuples = workload.generator().takeUntil(15_000);
  const requests = workload.requests(tuples);
  assert.deepEqual(sim.stream(requests, 8), { answered: requests.length, refused: 0 });
  assert.ok(sim.node.migrations.length > 0, 'the scheduler moved actors under this load');
  for (const send of workload.finish) await sim.call(send.instance, send.message);
  assertMatchesReference(await readReported(sim.call, workload), workload.reference(tuples));
  await assertNothingLate(sim.call, workload);
});
