/**
 * The discrete-event simulator, not only the closed forms, meets the calibration targets
 * on the two cards with published forwarding data: the cores needed for line rate exactly as the
 * §2.2.4 text gives them, and the all-cores headroom within 10% (docs/calibration.md, "The
 * simulator measured against the same figures").
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { runCharacterize } from '../../src/experiments/characterize.ts';
import { CORES_FOR_LINE_RATE, HEADROOM_US_ALL_CORES } from '../../src/hw/data/published.ts';
import { getNicProfile, hostOf } from '../../src/hw/index.ts';

for (const name of ['liquidio-cn2350', 'stingray-ps225'] as const) {
  test(`${name}: simulated cores for line rate exact, headroom within 10% of the text`, () => {
    const nic = getNicProfile(name);
    // 200 µs points: the shortest the CLI allows, where the searches still match longer points.
    const result = runCharacterize({ nic, host: hostOf(nic), seed: 1, pointNs: 200_000 });
    for (const [bytes, cores] of Object.entries(CORES_FOR_LINE_RATE[name])) {
      assert.equal(result.coresForLineRate[bytes], cores, `${bytes} B`);
    }
    for (const [bytes, published] of Object.entries(HEADROOM_US_ALL_CORES[name])) {
      const model = result.headroomUs[bytes];
      assert.ok(
        typeof model === 'number' && Math.abs(model / published - 1) <= 0.1,
        `${bytes} B headroom ${model} µs vs ${published}`,
      );
    }
  });
}
