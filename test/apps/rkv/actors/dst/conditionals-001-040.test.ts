/**
 * DST of RKV's consensus actor with conditional puts (SET NX / XX), seeds 1–40 (harness.ts option
 * `conditionals`: about a third of the puts conditional; drops, duplicates, jitter, partitions and
 * crashes as in the CI seeds). Every run must pass C1 (linearizable, with the KV model's `cput`),
 * C2 (no lost write) and R1 (replicas agree); the file must have seen conditional puts both write
 * and not write. Without the leader's per-key guards (a put or delete refused while a conditional
 * put holds the key; a conditional put refused while a command on its key is proposed, not
 * applied) seeds 25 and 36 fail linearizability (of 1–150: 25, 36, 55, 106, 113).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST with conditional puts: seeds 1–40 pass', (t) => {
  const totals = assertActorSeedsPass(t, 1, 40, { conditionals: true });
  assert.ok(totals.conditionalWritten >= 10, `conditional puts that wrote: ${totals.conditionalWritten}`);
  assert.ok(
    totals.conditionalNotWritten >= 10,
    `conditional puts that did not: ${totals.conditionalNotWritten}`,
  );
});
