import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fitForwarding } from '../../src/hw/calibrate/fit-forwarding.ts';
import { getNicProfile } from '../../src/hw/load-profile.ts';

function close(actual: number, expected: number, what: string): void {
  const tolerance = Math.max(1e-3, Math.abs(expected) * 0.01);
  assert.ok(
    Math.abs(actual - expected) <= tolerance,
    `${what}: profile holds ${expected}, the fit gives ${actual}`,
  );
}

for (const nic of ['liquidio-cn2350', 'stingray-ps225'] as const) {
  test(`${nic}: the profile's forwarding constants are what the fitting script produces`, () => {
    const fit = fitForwarding(nic);
    const held = getNicProfile(nic).forwarding;
    close(fit.compute.computeBaseNs, held.computeBaseNs, 'computeBaseNs');
    close(fit.compute.computePerByteNs, held.computePerByteNs, 'computePerByteNs');
    close(fit.ioInterval.singleCoreExtra, held.singleCoreExtra, 'singleCoreExtra');
    close(fit.ioInterval.contentionLinear, held.contentionLinear, 'contentionLinear');
    close(fit.ioInterval.contentionQuadratic, held.contentionQuadratic, 'contentionQuadratic');
    assert.deepEqual(fit.ioInterval.sizesBytes, held.ioIntervalNs.sizesBytes);
    fit.ioInterval.ioIntervalNs.forEach((value, index) => {
      close(value, held.ioIntervalNs.values[index]!, `ioIntervalNs[${index}]`);
    });
  });
}
