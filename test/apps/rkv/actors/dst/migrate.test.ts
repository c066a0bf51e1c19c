/**
 * DST seeds that force-migrate the consensus and memtable actors of random replicas NIC↔host
 * (SimNode.migrate) every 0.3–0.9 ms while the fabric drops, duplicates, reorders and partitions:
 * the actors keep every bit of state (log, sessions, roles, pending timers) in DMOs, so a moved
 * actor carries on, and the same checks must pass (linearizable history, no lost write, replicas
 * agree).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('consensus actor DST with forced NIC↔host migrations: seeds 1001–1006 pass', (t) => {
  const totals = assertActorSeedsPass(t, 1001, 6, { migrate: true });
  assert.ok(totals.migrations >= 6 * 3, `migrations: ${totals.migrations}`);
});
