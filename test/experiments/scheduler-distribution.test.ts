import assert from 'node:assert/strict';
import { test } from 'node:test';
import { paperDistribution } from '../../src/experiments/scheduler-comparison.ts';
import { getNicProfile, parseProfile } from '../../src/hw/index.ts';

test("a user's card gets the paper's distribution of its family, whatever its name", () => {
  const renamedBlueField = parseProfile({ extends: 'bluefield-1m332a', name: 'my-bf2' });
  const renamedLiquidIo = parseProfile({ extends: 'liquidio-cn2360', name: 'stingray-lookalike' });
  assert.ok(renamedBlueField.kind === 'nic' && renamedLiquidIo.kind === 'nic');
  for (const kind of ['exponential', 'bimodal'] as const) {
    assert.deepEqual(
      paperDistribution(renamedBlueField, kind),
      paperDistribution(getNicProfile('bluefield-1m332a'), kind),
    );
    assert.deepEqual(
      paperDistribution(renamedLiquidIo, kind),
      paperDistribution(getNicProfile('liquidio-cn2350'), kind),
    );
  }
  // The two families do differ (the paper's 27 µs vs 32 µs means), so the checks above can fail.
  assert.notDeepEqual(
    paperDistribution(getNicProfile('stingray-ps225'), 'exponential'),
    paperDistribution(getNicProfile('liquidio-cn2350'), 'exponential'),
  );
});
