/**
 * migration-zero-loss.test.ts with NIC core 0 owning the socket (`ingress: 'core'`): the same
 * 100 000 requests through ≥ 20 forced migrations, exercising PREPARE / MOVED / OUT_FORWARD and
 * host replies sent through the core (socket-core-controller.ts); the same assertions. Without
 * the warm spare (only the watchdog uses it): a worker's start-up less, the test stays well under 30 s.
 */
import { test } from 'node:test';
import { runZeroLoss } from './fixtures/zero-loss.ts';

test('ingress core: 100 000 requests through ≥ 20 forced migrations, each answered once, state and order kept', async () => {
  await runZeroLoss({ ingress: 'core', warmSpare: false });
});
