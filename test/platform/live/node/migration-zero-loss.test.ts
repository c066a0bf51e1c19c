/**
 * Zero loss across live migration (issue 4): a client keeps 32 requests in flight to a stateful,
 * exclusive actor while the test forces migrations NIC ⇄ host; every request is answered exactly
 * once, the actor's DMO state equals the model, and per-key order holds (fixtures/zero-loss.ts).
 */
import { test } from 'node:test';
import { runZeroLoss } from './fixtures/zero-loss.ts';

test('100 000 requests through ≥ 20 forced migrations: each answered once, state and order kept', async () => {
  await runZeroLoss({});
});
