/**
 * The memtable's declared work for the delete bookkeeping (storage-actors.ts `memtableWork`,
 * docs/apps/rkv-sim.md "Declared work"): the handlers that touch the `answers`, `waiting` and
 * `holds` hash maps on every replica are charged 400 instructions per hash operation, not the
 * base cost alone; what the offload experiment sends (gets, applies without a session) is not.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RKV_BASE_INSTRUCTIONS } from '../../../../src/apps/rkv/actors/consensus-actor.ts';
import { DEL_EXISTED, type RkvMessage, rkvKey } from '../../../../src/apps/rkv/actors/messages.ts';
import { rkvMemtable } from '../../../../src/apps/rkv/actors/storage-actors.ts';

const HASH_OP = 400;
const NO_ORIGIN = new Uint8Array(0);

function instructions(message: RkvMessage): number {
  const work = rkvMemtable.cost(message);
  assert.ok(work !== undefined, `${message.type} has declared work`);
  return work.instructions;
}

test('del-again, probed, scanned and counted are charged their hash-map operations', () => {
  assert.equal(
    instructions({ type: 'del-again', clientId: 3, seq: 1, origin: NO_ORIGIN }),
    RKV_BASE_INSTRUCTIONS + 3 * HASH_OP,
    '`answers` read; `waiting` read and written back',
  );
  assert.equal(
    instructions({
      type: 'probed',
      slot: 9,
      clientId: 3,
      seq: 1,
      existed: DEL_EXISTED,
      origin: NO_ORIGIN,
      hold: 0,
    }),
    RKV_BASE_INSTRUCTIONS + 6 * HASH_OP,
    'the hold released (2), `answers` read and written, `waiting` read and deleted (4)',
  );
  assert.equal(instructions({ type: 'scanned', hold: 0 }), RKV_BASE_INSTRUCTIONS + 2 * HASH_OP);
  assert.equal(
    instructions({ type: 'counted', keys: 5, origin: NO_ORIGIN, hold: 0 }),
    RKV_BASE_INSTRUCTIONS + 2 * HASH_OP,
  );
});

test('an apply-del under a session costs 3 hash operations more than one without', () => {
  const key = rkvKey(5);
  const withSession = instructions({
    type: 'apply-del',
    slot: 9,
    clientId: 3,
    seq: 1,
    key,
    origin: NO_ORIGIN,
  });
  const without = instructions({ type: 'apply-del', slot: 9, clientId: 0, seq: 0, key, origin: NO_ORIGIN });
  // Without a session and with no one waiting, nothing decides `existed` (no search either).
  assert.equal(
    withSession - without,
    1400 + 3 * HASH_OP,
    'the search that decides existed, and the bookkeeping',
  );
});
