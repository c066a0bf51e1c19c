/** Runs the synthetic actor on the test timing under one traffic source; returns what it measured. */
import { syntheticActor } from '../../../src/experiments/synthetic-actor.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { ClosedLoopClients, OpenLoopSource } from '../../../src/platform/sim/traffic.ts';
import { Random } from '../../../src/random.ts';
import { testTiming } from './test-timing.ts';

export function synthetic(options: {
  readonly sendAhead?: number;
  readonly closed?: number;
  readonly seed: number;
}) {
  const kernel = new EventKernel();
  const node = new SimNode({ timing: testTiming(), kernel, scheduler: { enableMigration: false } });
  const ref = node.register(syntheticActor);
  const random = new Random(options.seed);
  const costs = random.fork('costs');
  const make = () => ({
    target: ref,
    message: { type: 'work' as const, costNs: 500 + costs.int(0, 5_000), pad: new Uint8Array(0) },
  });
  let maxOutstanding = 0;
  const watch = kernel.registerKind((k) => {
    maxOutstanding = Math.max(maxOutstanding, node.outstandingClients());
    if (k.now() < 20_000_000) k.scheduleAfter(watch, 10_000, 0, 0);
  }, 'watch');
  kernel.schedule(watch, 0, 0, 0);
  const recorder =
    options.closed !== undefined
      ? new ClosedLoopClients({
          node,
          random: random.fork('arrivals'),
          outstanding: options.closed,
          make,
          endNs: 20_000_000,
        }).recorder
      : new OpenLoopSource({
          node,
          random: random.fork('arrivals'),
          ratePerSec: 500_000,
          make,
          endNs: 20_000_000,
          measureFromNs: 1_000_000,
          ...(options.sendAhead === undefined ? {} : { sendAhead: options.sendAhead }),
        }).recorder;
  kernel.run({});
  return {
    answered: recorder.answered,
    refused: recorder.refused,
    meanNs: recorder.meanNs,
    p50: recorder.percentileNs(50),
    p99: recorder.percentileNs(99),
    maxOutstanding,
  };
}
