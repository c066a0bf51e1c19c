/**
 * DST seeds for per-sender order across a move to the host (harness.ts option `migrateOrder`):
 * a replica's consensus actor on the host, its memtable moved NIC↔host again and again while the
 * consensus sends it applies — during the writes, through restarted replicas' recovery and
 * catch-up, and on every replica as the clients stop. An apply that overtook an older one would
 * leave an older value (replicas-differ: RKV's lost acknowledged put after a fail-over) or a wrong
 * delete answer (delete-answers).
 *
 * The ranges hold seeds that failed with the simulator's hold undone (sim-node.ts
 * #arriveAtHostLocal delivering at once): 112 (delete-answers) and 213 (replicas-differ), of 4 in
 * seeds 1–400. Seed 2 stayed 'migrating' for good before #divertHeldToNic (a move back to the NIC
 * while the last move to the host still drained).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { assertActorSeedsPass } from './seed-range.ts';

test('actor DST with the memtable shuttled NIC↔host beside a host consensus: seeds 1–5, 106–120, 206–220 pass', (t) => {
  const ranges = [
    [1, 5],
    [106, 15],
    [206, 15],
  ] as const;
  let movesToHost = 0;
  let handOvers = 0;
  let episodes = 0;
  for (const [first, count] of ranges) {
    const totals = assertActorSeedsPass(t, first, count, { migrateOrder: true });
    movesToHost += totals.orderMovesToHost;
    handOvers += totals.orderHandOvers;
    episodes += totals.orderEpisodes;
  }
  // The schedule must have done what it is for: many moves to the host beside a host consensus,
  // some of them with requests buffered on the NIC to hand over behind newer host messages.
  assert.ok(episodes >= 35 * 5, `episodes: ${episodes}`);
  assert.ok(movesToHost >= 35 * 100, `memtable moves to the host: ${movesToHost}`);
  assert.ok(handOvers >= 35, `moves that handed buffered requests over: ${handOvers}`);
  t.diagnostic(
    `${episodes} episodes, ${movesToHost} memtable moves to the host, ${handOvers} with a hand-over`,
  );
});
