/**
 * A simulated run is a function of its seed: the same seed replays the same event trace exactly,
 * a different seed gives a different trace, and adding a component with its own forked stream does
 * not change what the existing components draw (their arrival and service times are unchanged).
 * The model is a small open queue — Poisson arrivals, exponential service, one server — driven by
 * the real kernel and samplers, as the simulator drives them.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ExponentialSampler,
  PoissonArrivalSampler,
  ZipfSampler,
} from '../../../src/platform/sim/distributions.ts';
import { EventKernel, type EventKind } from '../../../src/platform/sim/event-kernel.ts';
import { Random } from '../../../src/random.ts';

interface Trace {
  /** (time, kind, a) of every event fired, flattened. */
  readonly events: number[];
  readonly arrivalTimes: number[];
  readonly serviceTimes: number[];
}

function simulate(seed: number, withNoise: boolean, events = 20_000): Trace {
  const root = new Random(seed);
  const arrivalsRandom = root.fork('arrivals');
  const serviceRandom = root.fork('server');
  const keyRandom = root.fork('keys');
  const arrivals = new PoissonArrivalSampler(800_000);
  const service = new ExponentialSampler(1000);
  const keys = new ZipfSampler(1000, 0.99);
  const kernel = new EventKernel();
  const trace: Trace = { events: [], arrivalTimes: [], serviceTimes: [] };
  let queued = 0;
  let busy = false;

  const startService = (k: EventKernel): void => {
    busy = true;
    queued--;
    const serviceNs = Math.round(service.sample(serviceRandom));
    trace.serviceTimes.push(serviceNs);
    k.scheduleAfter(done, serviceNs, 0, 0);
  };
  const arrive: EventKind = kernel.registerKind((k, key) => {
    trace.events.push(k.now(), arrive, key);
    trace.arrivalTimes.push(k.now());
    queued++;
    if (!busy) startService(k);
    k.scheduleAfter(arrive, Math.round(arrivals.sample(arrivalsRandom)), keys.sample(keyRandom), 0);
  }, 'arrive');
  const done: EventKind = kernel.registerKind((k) => {
    trace.events.push(k.now(), done, 0);
    busy = false;
    if (queued > 0) startService(k);
  }, 'done');
  kernel.schedule(arrive, 0, keys.sample(keyRandom), 0);

  if (withNoise) {
    // A component added later, with its own stream: it must not shift anyone else's draws.
    const noiseRandom = root.fork('background-traffic');
    const noise = kernel.registerKind((k) => {
      k.scheduleAfter(noise, 1 + noiseRandom.int(0, 5000), 0, 0);
    }, 'noise');
    kernel.schedule(noise, 0, 0, 0);
  }
  kernel.run({ maxEvents: events });
  return trace;
}

describe('determinism', () => {
  it('replays the identical event trace from the same seed', () => {
    const first = simulate(1234, false);
    const second = simulate(1234, false);
    assert.equal(first.events.length, 3 * 20_000);
    assert.deepEqual(second.events, first.events);
  });

  it('gives a different trace for a different seed', () => {
    assert.notDeepEqual(simulate(1235, false).events, simulate(1234, false).events);
  });

  it('keeps existing components’ draws when a component with its own fork is added', () => {
    const alone = simulate(77, false, 20_000);
    const withNoise = simulate(77, true, 60_000);
    const arrivals = Math.min(alone.arrivalTimes.length, withNoise.arrivalTimes.length);
    const services = Math.min(alone.serviceTimes.length, withNoise.serviceTimes.length);
    assert.ok(arrivals > 5000 && services > 5000, 'both runs got far enough to compare');
    assert.deepEqual(withNoise.arrivalTimes.slice(0, arrivals), alone.arrivalTimes.slice(0, arrivals));
    assert.deepEqual(withNoise.serviceTimes.slice(0, services), alone.serviceTimes.slice(0, services));
  });
});
