import assert from 'node:assert/strict';
import { test } from 'node:test';
import { isIpipeError } from '../../src/errors.ts';
import { HybridScheduler } from '../../src/sched/hybrid-scheduler.ts';
import { DEFAULT_SCHEDULER_SETTINGS, resolveSchedulerSettings } from '../../src/sched/settings.ts';

test('defaults are valid and every knob is present', () => {
  const settings = resolveSchedulerSettings();
  assert.deepEqual(settings, DEFAULT_SCHEDULER_SETTINGS);
  assert.ok(Object.isFrozen(settings));
});

const bad: [string, Record<string, unknown>, RegExp][] = [
  ['alpha at 0', { alpha: 0 }, /alpha/],
  ['alpha at 1', { alpha: 1 }, /alpha/],
  ['negative Mean_thresh', { meanThreshNs: -5 }, /meanThreshNs/],
  ['NaN Tail_thresh', { tailThreshNs: Number.NaN }, /tailThreshNs/],
  ['fractional Q_thresh', { queueThresh: 2.5 }, /queueThresh/],
  ['negative push warm-up', { pushWarmupCompletions: -1 }, /pushWarmupCompletions/],
  ['zero EWMA weight', { latencyEwmaWeight: 0 }, /latencyEwmaWeight/],
  ['unknown quantum rule', { quantumRule: 'biggest' }, /quantumRule/],
  ['tail below mean', { meanThreshNs: 50_000, tailThreshNs: 10_000 }, /tailThreshNs.*at least meanThreshNs/],
  ['misspelt key', { meanTresh: 5 }, /meanTresh/],
];

for (const [name, overrides, pattern] of bad) {
  test(`invalid settings are a typed error naming the field: ${name}`, () => {
    assert.throws(
      () => resolveSchedulerSettings(overrides as never),
      (error: unknown) =>
        isIpipeError(error, 'IPIPE_ERR_SCHED_INVALID_SETTINGS') && pattern.test((error as Error).message),
    );
  });
}

test('a scheduler refuses impossible core counts and a management core it does not have', () => {
  assert.throws(
    () => new HybridScheduler({ cores: 0 }),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_SCHED_INVALID_STATE'),
  );
  assert.throws(
    () => new HybridScheduler({ cores: 1.5 }),
    (e: unknown) => isIpipeError(e, 'IPIPE_ERR_SCHED_INVALID_STATE'),
  );
  assert.throws(
    () => new HybridScheduler({ cores: 2, settings: { managementCoreId: 2 } }),
    (e: unknown) =>
      isIpipeError(e, 'IPIPE_ERR_SCHED_INVALID_STATE') && /managementCoreId 2/.test((e as Error).message),
  );
});

test('baseline policies switch off downgrade and auto-scaling but keep migration as configured', () => {
  const fcfs = new HybridScheduler({ cores: 2, policy: 'fcfs' });
  assert.equal(fcfs.settings.enableDowngrade, false);
  assert.equal(fcfs.settings.enableAutoscale, false);
  assert.equal(fcfs.settings.enableMigration, true);
  const drr = new HybridScheduler({ cores: 2, policy: 'drr', settings: { enableMigration: false } });
  assert.equal(drr.roleOf(0), 'drr');
  assert.equal(drr.settings.enableMigration, false);
});
