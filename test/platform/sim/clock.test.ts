/**
 * The simulated clock: it never runs backwards, refuses times it cannot represent exactly (the
 * past, fractions, NaN, negatives, beyond 2^53 − 1 ns) with a typed error (IPIPE_ERR_SIM_INVALID_TIME) that says what to do, and
 * `run` stops and leaves the clock where its options say (idle, until, maxEvents, stop()). A handler
 * that throws leaves a usable kernel; nested runs are refused; the progress hook is rate-limited.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isIpipeError } from '../../../src/errors.ts';
import { EventKernel, type EventKind, MAX_TIME_NS } from '../../../src/platform/sim/event-kernel.ts';

const simTimeError = (error: unknown) => isIpipeError(error, 'IPIPE_ERR_SIM_INVALID_TIME');

function kernelWithRecorder(): { kernel: EventKernel; kind: EventKind; times: number[] } {
  const kernel = new EventKernel();
  const times: number[] = [];
  const kind = kernel.registerKind((k) => times.push(k.now()), 'record');
  return { kernel, kind, times };
}

describe('the simulated clock', () => {
  it('never runs backwards, whatever order events are scheduled in', () => {
    // size 'max': at fast-check's default size the array holds at most 10 events, a heap three
    // levels deep; the longest run is checked so that a smaller default cannot slip back in.
    let longestRun = 0;
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1_000_000 }), { maxLength: 200, size: 'max' }),
        (times) => {
          longestRun = Math.max(longestRun, times.length);
          const { kernel, kind, times: seen } = kernelWithRecorder();
          for (const time of times) kernel.schedule(kind, time, 0, 0);
          let last = kernel.now();
          while (kernel.step()) {
            assert.ok(kernel.now() >= last);
            last = kernel.now();
          }
          assert.deepEqual(
            seen,
            times.toSorted((x, y) => x - y),
          );
        },
      ),
    );
    assert.ok(longestRun >= 100, `the longest run scheduled only ${longestRun} events`);
  });

  it('refuses to schedule in the past', () => {
    const { kernel, kind } = kernelWithRecorder();
    kernel.schedule(kind, 100, 0, 0);
    kernel.run();
    assert.equal(kernel.now(), 100);
    assert.throws(() => kernel.schedule(kind, 99, 0, 0), {
      code: 'IPIPE_ERR_SIM_INVALID_TIME',
      message: /event time 99 is in the past: the simulated clock is at 100 ns and never runs backwards/,
    });
    assert.throws(() => kernel.at(0, () => {}), simTimeError);
    kernel.schedule(kind, 100, 0, 0); // "now" itself is fine
    assert.equal(kernel.pending, 1);
  });

  it('refuses NaN, fractional, negative, infinite and unrepresentable times and delays', () => {
    const { kernel, kind } = kernelWithRecorder();
    for (const bad of [Number.NaN, 0.5, -1, Number.POSITIVE_INFINITY, MAX_TIME_NS + 1, 2 ** 60]) {
      assert.throws(() => kernel.schedule(kind, bad, 0, 0), simTimeError, `schedule at ${bad}`);
      assert.throws(() => kernel.scheduleAfter(kind, bad, 0, 0), simTimeError, `schedule after ${bad}`);
      assert.throws(() => kernel.after(bad, () => {}), simTimeError, `after ${bad}`);
    }
    assert.throws(() => kernel.scheduleAfter(kind, 1.25, 0, 0), /round sampled delays/);
    assert.equal(kernel.pending, 0, 'nothing was scheduled by a refused call');
    // The last representable nanosecond is accepted.
    kernel.schedule(kind, MAX_TIME_NS, 0, 0);
    kernel.run();
    assert.equal(kernel.now(), MAX_TIME_NS);
    assert.throws(() => kernel.scheduleAfter(kind, 1, 0, 0), simTimeError);
  });

  it('refuses unregistered kinds, and kind 0 (reserved for closures)', () => {
    const { kernel, kind } = kernelWithRecorder();
    assert.throws(() => kernel.schedule((kind + 1) as EventKind, 1, 0, 0), /not registered/);
    assert.throws(() => kernel.schedule(0 as EventKind, 1, 0, 0), /not registered/);
    assert.throws(() => kernel.schedule(1.5 as EventKind, 1, 0, 0), /not registered/);
    assert.equal(kernel.kindName(kind), 'record');
  });

  it('post/postAfter (no handle) fire exactly as schedule/scheduleAfter would, and refuse the same input', () => {
    // Each event is scheduled twice, in two kernels: once always with a handle, once through the
    // method the case picks. Firing order, clocks and later handles must match.
    const pick = fc.constantFrom('schedule', 'scheduleAfter', 'post', 'postAfter');
    let longestRun = 0;
    fc.assert(
      fc.property(
        fc.array(fc.record({ delayNs: fc.integer({ min: 0, max: 200_000 }), via: pick }), {
          maxLength: 100,
          size: 'max', // the default size stops at 10 events
        }),
        (events) => {
          longestRun = Math.max(longestRun, events.length);
          const fired: [number[], number[]] = [[], []];
          const kernels = [0, 1].map((side) => {
            const kernel = new EventKernel();
            const kind = kernel.registerKind((k, id) => fired[side]!.push(id, k.now()), 'record');
            return { kernel, kind };
          });
          const [reference, subject] = kernels as [(typeof kernels)[0], (typeof kernels)[0]];
          events.forEach(({ delayNs, via }, id) => {
            reference.kernel.schedule(reference.kind, delayNs, id, 0);
            if (via === 'schedule') subject.kernel.schedule(subject.kind, delayNs, id, 0);
            else if (via === 'scheduleAfter') subject.kernel.scheduleAfter(subject.kind, delayNs, id, 0);
            else if (via === 'post') subject.kernel.post(subject.kind, delayNs, id, 0);
            else subject.kernel.postAfter(subject.kind, delayNs, id, 0);
          });
          assert.equal(subject.kernel.pending, reference.kernel.pending);
          // A posted event takes its sequence number like a scheduled one: later handles agree.
          assert.equal(
            subject.kernel.schedule(subject.kind, 7, -1, 0),
            reference.kernel.schedule(reference.kind, 7, -1, 0),
          );
          reference.kernel.run();
          subject.kernel.run();
          assert.deepEqual(fired[1], fired[0]);
        },
      ),
    );
    assert.ok(longestRun >= 50, `the longest run scheduled only ${longestRun} events`);
    const { kernel, kind } = kernelWithRecorder();
    kernel.schedule(kind, 100, 0, 0);
    kernel.run();
    for (const bad of [99, Number.NaN, 100.5, MAX_TIME_NS + 1]) {
      assert.throws(() => kernel.post(kind, bad, 0, 0), simTimeError, `post at ${bad}`);
    }
    for (const bad of [-1, Number.NaN, 0.5, MAX_TIME_NS]) {
      assert.throws(() => kernel.postAfter(kind, bad, 0, 0), simTimeError, `post after ${bad}`);
    }
    assert.throws(() => kernel.post(0 as EventKind, 100, 0, 0), /not registered/);
    assert.throws(() => kernel.postAfter((kind + 1) as EventKind, 0, 0, 0), /not registered/);
    assert.equal(kernel.pending, 0, 'nothing was posted by a refused call');
  });

  it('starts where it is told, and refuses a bad start', () => {
    assert.equal(new EventKernel({ startNs: 5_000 }).now(), 5_000);
    assert.throws(() => new EventKernel({ startNs: -1 }), simTimeError);
    assert.throws(() => new EventKernel({ startNs: 1.5 }), simTimeError);
  });
});

describe('run', () => {
  it('runs until idle and leaves the clock at the last event', () => {
    const { kernel, kind, times } = kernelWithRecorder();
    for (const time of [30, 10, 20]) kernel.schedule(kind, time, 0, 0);
    const result = kernel.run();
    assert.deepEqual(result, { reason: 'idle', eventsFired: 3, nowNs: 30 });
    assert.deepEqual(times, [10, 20, 30]);
    assert.equal(kernel.eventsProcessed, 3);
  });

  it('with untilNs fires events at or before it, then sets the clock to it', () => {
    const { kernel, kind, times } = kernelWithRecorder();
    for (const time of [10, 20, 30]) kernel.schedule(kind, time, 0, 0);
    assert.deepEqual(kernel.run({ untilNs: 20 }), { reason: 'until', eventsFired: 2, nowNs: 20 });
    assert.deepEqual(times, [10, 20]);
    assert.equal(kernel.nextEventTimeNs(), 30);
    assert.deepEqual(kernel.run({ untilNs: 100 }), { reason: 'idle', eventsFired: 1, nowNs: 100 });
    assert.throws(() => kernel.run({ untilNs: 50 }), simTimeError, 'until in the past');
  });

  it('stops after maxEvents, and when a handler calls stop()', () => {
    const kernel = new EventKernel();
    let fired = 0;
    const kind = kernel.registerKind((k, stopHere) => {
      fired++;
      if (stopHere === 1) k.stop();
    });
    for (let time = 1; time <= 10; time++) kernel.schedule(kind, time, time === 7 ? 1 : 0, 0);
    assert.deepEqual(kernel.run({ maxEvents: 3 }), { reason: 'maxEvents', eventsFired: 3, nowNs: 3 });
    assert.deepEqual(kernel.run(), { reason: 'stopped', eventsFired: 4, nowNs: 7 });
    kernel.stop(); // outside a run: no effect on the next one
    assert.deepEqual(kernel.run(), { reason: 'idle', eventsFired: 3, nowNs: 10 });
    assert.equal(fired, 10);
  });

  it('step fires exactly one event and reports an empty queue', () => {
    const { kernel, kind, times } = kernelWithRecorder();
    assert.equal(kernel.step(), false);
    kernel.schedule(kind, 5, 0, 0);
    kernel.schedule(kind, 5, 0, 0);
    assert.equal(kernel.step(), true);
    assert.deepEqual(times, [5]);
    assert.equal(kernel.pending, 1);
  });

  it('propagates a handler exception, counts that event as fired, and stays usable', () => {
    const kernel = new EventKernel();
    const seen: number[] = [];
    const kind = kernel.registerKind((k, id) => {
      seen.push(id);
      k.scheduleAfter(kind2, 1, id, 0);
      if (id === 1) throw new Error('boom');
    });
    const kind2 = kernel.registerKind((_k, id) => seen.push(100 + id));
    kernel.schedule(kind, 1, 1, 0);
    kernel.schedule(kind, 1, 2, 0);
    assert.throws(() => kernel.run(), /boom/);
    assert.equal(kernel.running, false);
    assert.equal(kernel.pending, 2, 'the follow-up of the throwing event and event 2 remain');
    kernel.run();
    assert.deepEqual(seen, [1, 2, 101, 102]);
  });

  it('refuses a nested run or step from inside a handler', () => {
    const kernel = new EventKernel();
    let error: unknown;
    const kind = kernel.registerKind((k) => {
      try {
        k.step();
      } catch (caught) {
        error = caught;
      }
    });
    kernel.schedule(kind, 1, 0, 0);
    kernel.run();
    assert.match(String(error), /inside a handler/);
  });

  it('calls onProgress once per progressEveryEvents, with the clock and the count', () => {
    const kernel = new EventKernel();
    const kind = kernel.registerKind((k, left) => {
      if (left > 0) k.scheduleAfter(kind, 10, left - 1, 0);
    });
    kernel.schedule(kind, 0, 99, 0);
    const calls: Array<readonly [number, number]> = [];
    kernel.run({ progressEveryEvents: 25, onProgress: (nowNs, events) => calls.push([nowNs, events]) });
    assert.deepEqual(calls, [
      [240, 25],
      [490, 50],
      [740, 75],
      [990, 100],
    ]);
    assert.throws(() => kernel.run({ progressEveryEvents: 0 }), RangeError);
  });

  it('runs closures scheduled with at/after, and cancels them', () => {
    const kernel = new EventKernel();
    const log: string[] = [];
    kernel.after(5, () => log.push(`a@${kernel.now()}`));
    const dropped = kernel.at(3, () => log.push('dropped'));
    kernel.at(5, () => kernel.after(0, () => log.push(`c@${kernel.now()}`)));
    assert.equal(kernel.cancel(dropped), true);
    kernel.run();
    assert.deepEqual(log, ['a@5', 'c@5']);
  });
});
