/**
 * The paper's RTA observation, reproduced by the hybrid scheduler itself (iPipe §4.2 push
 * migration; §5 "The applications": "under load the ranker's sort starves packet receipt, so it
 * migrates to the host"). Nothing here calls `migrate`: on a simulated LiquidIO CN2350 under a
 * closed-loop load, the management core sees the FCFS mean latency pass Mean_thresh, picks the
 * actor with the most NIC load, and that is the ranker — its quicksorts over every window's keys
 * (cost-model.ts: m·log2 m comparisons per chunk) outweigh the filter's per-byte matching and the
 * counter's per-key updates. The counts stay right across the move, and the pipeline drains its
 * windows sooner than with the same load and migration switched off.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type RtaWorkload, rtaWorkload } from '../../../src/apps/rta/index.ts';
import { assertMatchesReference, assertNothingLate, readReported, SimRta } from './harness.ts';

const SEED = 4;

// Many hashtags and a 100 ms slide over a 4 s window: each slide re-ranks ~500 distinct keys, so
// the ranker's sorts dominate; 8 requests outstanding keep the filter's load below it.
function loadedWorkload(): RtaWorkload {
  return rtaWorkload({
    config: {
      counters: 1,
      rankers: 1,
      window: { windowMs: 4_000, slideMs: 100, latenessMs: 2_000, tickMs: 1 },
    },
    packetBytes: 1024,
    seed: SEED,
    generator: { hashtags: 5_000, tuplesPerSecond: 200 },
  });
}

async function run(enableMigration: boolean) {
  const workload = loadedWorkload();
  const sim = new SimRta(workload, { scheduler: { enableMigration } });
  for (const send of workload.setup) await sim.call(send.instance, send.message);
  const tuples = workload.generator().takeUntil(20_000);
  const requests = workload.requests(tuples);
  const outcome = sim.stream(requests, 8);
  const drainedAtNs = sim.kernel.now();
  const movedDuringStream = [...sim.node.migrations];
  for (const send of workload.finish) await sim.call(send.instance, send.message);
  return { workload, sim, tuples, requests, outcome, drainedAtNs, movedDuringStream };
}

/** The run with migration on, shared by both tests (it is the expensive part). */
let pushedRun: ReturnType<typeof run> | undefined;
const runPushed = () => {
  pushedRun ??= run(true);
  return pushedRun;
};

test('under load the hybrid scheduler, on its own, pushes the ranker to the host; counts stay right', async (t) => {
  t.diagnostic(`seed ${SEED}`);
  const { workload, sim, tuples, requests, outcome, movedDuringStream } = await runPushed();
  assert.deepEqual(outcome, { answered: requests.length, refused: 0 }, 'no request lost');
  const names = new Map([...sim.refs].map(([name, ref]) => [ref.id as number, name]));
  const pushes = sim.node.decisions.filter((d) => d.kind === 'migrate');
  assert.ok(pushes.length > 0, 'the scheduler decided to migrate something');
  const first = pushes[0]!;
  assert.ok(first.kind === 'migrate');
  t.diagnostic(first.why);
  assert.equal(names.get(first.actor), 'rta-ranker-0', `the first push is the ranker's: ${first.why}`);
  assert.equal(first.to, 'host');
  assert.equal(first.trigger, 'mean-latency', 'pushed because the FCFS mean latency passed Mean_thresh');
  assert.deepEqual(
    movedDuringStream.map((m) => `${m.name} ${m.from}→${m.to} ${m.trigger}`),
    ['rta-ranker-0 nic→host mean-latency'],
    'during the stream the migration completed, and only the ranker moved',
  );
  assert.ok(movedDuringStream[0]!.stateBytes > 0, 'its DMOs (rankings, inbox, progress) travelled with it');
  // After the stream (the end-of-stream burst of window closes) the scheduler may pull the idle
  // ranker back and push it again; whatever it does, it only ever moves the ranker.
  t.diagnostic(sim.node.migrations.map((m) => `${m.name} ${m.from}→${m.to} ${m.trigger}`).join('; '));
  assert.ok(sim.node.migrations.every((m) => m.name === 'rta-ranker-0'));
  assertMatchesReference(await readReported(sim.call, workload), workload.reference(tuples));
  await assertNothingLate(sim.call, workload);
});

test('with migration off the same load leaves the ranker on the NIC, and the windows drain later', async (t) => {
  const pushed = await runPushed();
  const pinned = await run(false);
  t.diagnostic(
    `seed ${SEED}: stream drained at ${(pushed.drainedAtNs / 1e6).toFixed(2)} ms (ranker pushed) vs ` +
      `${(pinned.drainedAtNs / 1e6).toFixed(2)} ms (migration off), simulated`,
  );
  assert.equal(pinned.sim.node.migrations.length, 0);
  assert.equal(pinned.sim.node.domainOf(pinned.sim.ref('rta-ranker-0').id), 'nic');
  // The ranker's backlog of sorts on one NIC core finishes well after the same backlog on the
  // (faster) host core: results are fresher once the scheduler has moved it.
  assert.ok(
    pushed.drainedAtNs * 1.5 < pinned.drainedAtNs,
    `drained at ${pushed.drainedAtNs} ns with the push, ${pinned.drainedAtNs} ns without`,
  );
  // Both report the same, correct windows.
  assertMatchesReference(
    await readReported(pinned.sim.call, pinned.workload),
    pinned.workload.reference(pinned.tuples),
  );
});
