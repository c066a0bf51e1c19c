/**
 * A migration records the Prepare phase's own duration (issue 4: "each phase's duration
 * recorded"). Before, `phasesMs.prepare` was the literal 0 in both NIC controllers and the time
 * Prepare took was counted in Ready — with NIC core 0 owning the socket that is a round trip to
 * the core (IN_PREPARE → OUT_PREPARED), so /metrics showed prepare 0 s and an inflated ready.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { actorId } from '../../../../src/ids.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;

for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: Prepare is measured, in both directions, and the phases add up to the move`, async () => {
    const node = await LiveNode.start({
      ingress,
      warmSpare: false,
      catalog: [{ id: actorId(1), name: 'ledger', module: MODULE, exportName: 'ledger' }],
      nicCores: 1,
      hostCores: 1,
      scheduler: { enableMigration: false },
    });
    try {
      for (const to of ['host', 'nic'] as const) {
        const before = performance.now();
        const record = await node.nic.migrate(actorId(1), to);
        const wallMs = performance.now() - before;
        const { prepare, ready, gone, clean } = record.phasesMs;
        assert.ok(prepare > 0, `to ${to}: prepare ${prepare} ms was not measured`);
        for (const [phase, ms] of Object.entries(record.phasesMs))
          assert.ok(ms >= 0, `to ${to}: ${phase} ${ms} ms is negative`);
        assert.ok(prepare + ready + gone + clean <= wallMs, `to ${to}: phases exceed the ${wallMs} ms move`);
      }
    } finally {
      await node.stop();
    }
  });
