/**
 * The event loop allocates nothing per event once the clock is past 2^31 ns (2.1 simulated
 * seconds), where a time no longer fits V8's small integers. Before the kernel's and the event
 * set's fields were initialized where they are declared, V8 typed the clock fields "any value"
 * and boxed every stored time in a new heap number: about three per event of the hold model (docs/sim-speed.md, eighth pass).
 *
 * Measured as the collector sees it: minor collections (scavenges) reported by `perf_hooks` while
 * the kernel fires 10^6 events of the hold model, after a warm-up long enough for V8 to optimize the
 * loop (unoptimized code boxes its doubles whatever the fields' types).
 */

import assert from 'node:assert/strict';
import { constants, type PerformanceEntry, PerformanceObserver } from 'node:perf_hooks';
import { describe, it } from 'node:test';
import { ExponentialSampler } from '../../../src/platform/sim/distributions.ts';
import { EventKernel, type EventKind } from '../../../src/platform/sim/event-kernel.ts';
import { Random } from '../../../src/random.ts';

const LATE_START_NS = 2 ** 40; // ≈ 18 simulated minutes: far past 2^31 ns
const PENDING = 1000;
const MEASURED_EVENTS = 1_000_000;

/** Whether a `gc` performance entry is a minor collection (its kind is in `detail` on Node 20). */
function isScavenge(entry: PerformanceEntry): boolean {
  const detail = (entry as { readonly detail?: { readonly kind?: number } }).detail;
  return detail?.kind === constants.NODE_PERFORMANCE_GC_MINOR;
}

/** Minor collections (scavenges) that started while `run` ran. */
async function scavengesDuring(run: () => void): Promise<number> {
  const starts: number[] = [];
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) if (isScavenge(entry)) starts.push(entry.startTime);
  });
  observer.observe({ entryTypes: ['gc'] });
  const fromMs = performance.now();
  run();
  const toMs = performance.now();
  // GC entries are queued from the collector's callback and delivered on a later turn.
  await new Promise((resolve) => setTimeout(resolve, 50));
  for (const entry of observer.takeRecords()) if (isScavenge(entry)) starts.push(entry.startTime);
  observer.disconnect();
  return starts.filter((start) => start >= fromMs && start <= toMs).length;
}

describe('the event loop past 2^31 ns', () => {
  it('fires a million hold-model events with (almost) no young-generation collection', async () => {
    const kernel = new EventKernel({ startNs: LATE_START_NS });
    const random = new Random(20190819);
    const delay = new ExponentialSampler(1000);
    let hold = 0 as EventKind;
    hold = kernel.registerKind((k, a, b) => {
      k.scheduleAfter(hold, Math.round(delay.sample(random)), a, b);
    }, 'hold');
    for (let i = 0; i < PENDING; i++) {
      kernel.schedule(hold, LATE_START_NS + Math.round(delay.sample(random)), i, 0);
    }
    // Warm-up: several runs, so the loop is optimized as a whole, not only entered mid-loop.
    for (let round = 0; round < 20; round++) kernel.run({ maxEvents: 25_000 });
    const scavenges = await scavengesDuring(() => {
      const result = kernel.run({ maxEvents: MEASURED_EVENTS });
      assert.equal(result.eventsFired, MEASURED_EVENTS);
    });
    // Boxing each clock store made ~3 heap numbers (16 bytes each) per event, ~48 MB per 10^6
    // events: 9 scavenges in this test before the change, 0 after (three runs each). The bound
    // leaves room for the JIT's own allocations.
    assert.ok(scavenges <= 2, `expected at most 2 minor collections, saw ${scavenges}`);
  });
});
