/**
 * The event kernel fires events in (time, scheduling order), whatever mix of schedule, cancel and
 * step a model throws at it: compared, event by event, with a sorted-array model. Equal times are
 * FIFO, cancelled events never fire, nothing is lost or duplicated, and events scheduled from
 * inside handlers (including at the current time) take their right place. Small delay sets force
 * heavy ties; delays at and beyond the wheel's span exercise the heap of time buckets, their merging
 * and their move into the wheel; start times near 2^31, 2^32 and 2^40 exercise slot arithmetic; a
 * tiny initial capacity forces growth; bursts of cancels force compaction.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { EventHeap, TAKE_EMPTY, WHEEL_SPAN_NS } from '../../../src/platform/sim/event-heap.ts';
import {
  type EventHandle,
  EventKernel,
  type EventKind,
  NO_EVENT,
} from '../../../src/platform/sim/event-kernel.ts';

type Operation =
  | {
      readonly op: 'schedule';
      readonly delayNs: number;
      readonly children: number;
      readonly closure: boolean;
    }
  | { readonly op: 'cancel'; readonly pick: number }
  | { readonly op: 'step' }
  | { readonly op: 'run'; readonly count: number };

interface ModelEvent {
  readonly timeNs: number;
  readonly seq: number;
  readonly id: number;
  readonly children: number;
}

const WHEEL = WHEEL_SPAN_NS;
/**
 * Delays a handler uses for the children it schedules: fixed by the parent id so both sides agree.
 * Mostly tiny (ties), some at the wheel's edge and beyond (the heap, and moves into the wheel).
 */
const CHILD_DELAYS = [0, 1, 1, 3, 0, 7, 1, 2, WHEEL - 1, WHEEL, 0, 2 * WHEEL + 3];

function childDelay(parentId: number, index: number): number {
  return CHILD_DELAYS[(parentId * 3 + index) % CHILD_DELAYS.length]!;
}

/** The reference: a plain array kept sorted by (time, seq). */
class Model {
  pending: ModelEvent[] = [];
  nowNs: number;
  #seq = 0;
  #nextId = 0;
  readonly fired: Array<readonly [number, number]> = [];

  constructor(startNs: number) {
    this.nowNs = startNs;
  }

  schedule(atNs: number, children: number): number {
    const id = this.#nextId++;
    this.pending.push({ timeNs: atNs, seq: this.#seq++, id, children });
    this.pending.sort((x, y) => x.timeNs - y.timeNs || x.seq - y.seq);
    return id;
  }

  cancel(id: number): boolean {
    const index = this.pending.findIndex((event) => event.id === id);
    if (index < 0) return false;
    this.pending.splice(index, 1);
    return true;
  }

  step(): boolean {
    const event = this.pending.shift();
    if (event === undefined) return false;
    this.nowNs = event.timeNs;
    this.fired.push([event.timeNs, event.id]);
    for (let index = 0; index < event.children; index++) {
      this.schedule(this.nowNs + childDelay(event.id, index), 0);
    }
    return true;
  }
}

/** The kernel under test, wired so that each event records itself and spawns its children. */
class Subject {
  readonly kernel: EventKernel;
  readonly fired: Array<readonly [number, number]> = [];
  readonly handles: EventHandle[] = [];
  #nextId = 0;
  readonly #kind: EventKind;

  constructor(initialCapacity: number, startNs: number) {
    this.kernel = new EventKernel({ initialCapacity, startNs });
    this.#kind = this.kernel.registerKind((kernel, id, children) => this.#fire(kernel, id, children), 'test');
  }

  #fire(kernel: EventKernel, id: number, children: number): void {
    this.fired.push([kernel.now(), id]);
    for (let index = 0; index < children; index++) {
      this.schedule(kernel.now() + childDelay(id, index), 0, index % 2 === 1);
    }
  }

  schedule(atNs: number, children: number, closure: boolean): void {
    const id = this.#nextId++;
    const handle = closure
      ? this.kernel.at(atNs, () => this.#fire(this.kernel, id, children))
      : this.kernel.schedule(this.#kind, atNs, id, children);
    this.handles.push(handle);
  }
}

const operation: fc.Arbitrary<Operation> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.record({
      op: fc.constant('schedule' as const),
      delayNs: fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(0, 1, 2, 5) },
        { weight: 4, arbitrary: fc.integer({ min: 0, max: 5000 }) },
        { weight: 1, arbitrary: fc.constantFrom(WHEEL - 1, WHEEL, WHEEL + 1, 2 * WHEEL) },
        { weight: 2, arbitrary: fc.integer({ min: 0, max: 4 * WHEEL }) },
      ),
      children: fc.integer({ min: 0, max: 2 }),
      closure: fc.boolean(),
    }),
  },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
  { weight: 3, arbitrary: fc.constant({ op: 'step' as const }) },
  {
    weight: 1,
    arbitrary: fc.record({ op: fc.constant('run' as const), count: fc.integer({ min: 1, max: 20 }) }),
  },
);

function check(operations: readonly Operation[], initialCapacity: number, startNs = 0): void {
  const model = new Model(startNs);
  const subject = new Subject(initialCapacity, startNs);
  const kernel = subject.kernel;
  for (const action of operations) {
    switch (action.op) {
      case 'schedule': {
        const atNs = kernel.now() + action.delayNs;
        model.schedule(atNs, action.children);
        subject.schedule(atNs, action.children, action.closure);
        break;
      }
      case 'cancel': {
        if (subject.handles.length === 0) break;
        const id = action.pick % subject.handles.length;
        assert.equal(kernel.cancel(subject.handles[id]!), model.cancel(id), `cancel of event ${id}`);
        break;
      }
      case 'step':
        assert.equal(kernel.step(), model.step());
        break;
      case 'run':
        for (let index = 0; index < action.count; index++) model.step();
        kernel.run({ maxEvents: action.count });
        break;
    }
    assert.equal(kernel.pending, model.pending.length, 'pending count');
    assert.equal(kernel.now(), model.nowNs, 'clock');
    assert.equal(kernel.nextEventTimeNs(), model.pending[0]?.timeNs ?? Number.POSITIVE_INFINITY);
  }
  while (model.step());
  const result = kernel.run();
  assert.equal(result.reason, 'idle');
  assert.deepEqual(subject.fired, model.fired);
  assert.equal(kernel.pending, 0);
}

describe('event order', () => {
  it('matches a sorted-array model under random schedule/cancel/step interleavings', () => {
    fc.assert(
      fc.property(
        fc.array(operation, { maxLength: 300, size: 'max' }),
        fc.constantFrom(4, 1024),
        // Start anywhere, including just below 2^31 and 2^32 (where `time | 0` wraps) and far out.
        fc.constantFrom(0, 2 ** 31 - 100, 2 ** 32 - 1000, 2 ** 40 + 7),
        (operations, capacity, startNs) => check(operations, capacity, startNs),
      ),
      { numRuns: 300 },
    );
  });

  it('matches the model when cancels dominate (compaction happens mid-run)', () => {
    const cancelHeavy: fc.Arbitrary<Operation> = fc.oneof(
      {
        weight: 6,
        arbitrary: fc.record({
          op: fc.constant('schedule' as const),
          delayNs: fc.oneof(fc.constantFrom(0, 1, 3), fc.integer({ min: 0, max: 3000 }), fc.nat(3 * WHEEL)),
          children: fc.integer({ min: 0, max: 1 }),
          closure: fc.boolean(),
        }),
      },
      { weight: 5, arbitrary: fc.record({ op: fc.constant('cancel' as const), pick: fc.nat() }) },
      { weight: 1, arbitrary: fc.constant({ op: 'step' as const }) },
    );
    fc.assert(
      fc.property(fc.array(cancelHeavy, { minLength: 300, maxLength: 1200, size: 'max' }), (operations) =>
        check(operations, 16),
      ),
      { numRuns: 40 },
    );
  });

  for (const offsetNs of [0, 3 * WHEEL]) {
    it(`keeps FIFO order among many events at one time, scheduled before and during it (offset ${offsetNs} ns)`, () => {
      const kernel = new EventKernel();
      const order: number[] = [];
      // Times interleave, so each time's list is built up across the whole scheduling sequence.
      const timeOf = (id: number): number => offsetNs + (id % 3 === 0 ? 10 : 10 + (id % 7));
      const spawns = (id: number): boolean => id % 50 === 0;
      const kind = kernel.registerKind((k, id, spawn) => {
        order.push(id);
        if (spawn > 0) k.schedule(kind, k.now(), id + 1000, 0);
      });
      for (let id = 0; id < 200; id++) kernel.schedule(kind, timeOf(id), id, spawns(id) ? 1 : 0);
      kernel.run();
      const expected: number[] = [];
      for (let time = offsetNs + 10; time <= offsetNs + 16; time++) {
        const ids = Array.from({ length: 200 }, (_, id) => id).filter((id) => timeOf(id) === time);
        expected.push(...ids);
        // A child scheduled "now" comes after every event already scheduled for now, in parent order.
        expected.push(...ids.filter(spawns).map((id) => id + 1000));
      }
      assert.deepEqual(order, expected);
    });
  }

  it('keeps FIFO order when one far time has several buckets and compaction clears the time map', () => {
    const kernel = new EventKernel();
    const order: number[] = [];
    const kind = kernel.registerKind((_k, id) => order.push(id));
    // Beyond the wheel, in the heap. The time map has 2^16 entries: far, far + 2^16, far + 2^17 share one.
    const far = 3 * WHEEL + 5;
    const collide = 2 ** 16;
    kernel.schedule(kind, far, 0, 0); // bucket A for `far`
    kernel.schedule(kind, far + collide, 1, 0); // takes over the map entry
    kernel.schedule(kind, far, 2, 0); // so `far` gets a second, newer bucket
    kernel.schedule(kind, far + 2 * collide, 3, 0); // and the entry moves on again
    const doomed = Array.from({ length: 200 }, (_, i) => kernel.schedule(kind, 10_000_000 + i, 100 + i, 0));
    for (const handle of doomed) kernel.cancel(handle); // enough to compact (and clear the map)
    kernel.schedule(kind, far, 4, 0); // must not join bucket A ahead of event 2
    kernel.run();
    assert.deepEqual(order, [0, 2, 4, 1, 3]);
  });

  it('lets nothing cancelled move the clock: a later schedule before the next live event fires first', () => {
    for (const cancelledAtNs of [10, 3 * WHEEL]) {
      const kernel = new EventKernel();
      const order: number[] = [];
      const kind = kernel.registerKind((_k, id) => order.push(id));
      kernel.cancel(kernel.schedule(kind, cancelledAtNs, 0, 0));
      kernel.schedule(kind, 5 * WHEEL, 1, 0);
      assert.equal(kernel.run({ untilNs: 5 }).reason, 'until');
      kernel.schedule(kind, 6, 2, 0); // after the clock (5), before the cancelled event's time
      kernel.schedule(kind, cancelledAtNs + 1, 3, 0);
      kernel.run();
      assert.deepEqual(order, [2, 3, 1], `cancelled event at ${cancelledAtNs}`);
    }
  });

  it('moves far events into the wheel ahead of events scheduled later for the same time', () => {
    const kernel = new EventKernel();
    const order: number[] = [];
    const far = 3 * WHEEL + 17;
    const kind = kernel.registerKind((k, id) => {
      order.push(id);
      // Once the window covers `far`, a new event for that time joins the wheel behind the old ones.
      if (id === 100) k.schedule(kind, far, 3, 0);
    });
    kernel.schedule(kind, far, 0, 0); // heap
    kernel.schedule(kind, far, 1, 0); // same bucket
    kernel.schedule(kind, far - WHEEL + 5, 100, 0); // fires when `far` is inside the window
    kernel.schedule(kind, far, 2, 0);
    kernel.run();
    assert.deepEqual(order, [100, 0, 1, 2, 3]);
  });

  it('never fires a cancelled event, and reports stale and empty handles as not cancelled', () => {
    const kernel = new EventKernel();
    const fired: number[] = [];
    const kind = kernel.registerKind((_k, id) => fired.push(id));
    const handles = Array.from({ length: 100 }, (_, id) => kernel.schedule(kind, 5 + (id % 4), id, 0));
    for (let id = 0; id < 100; id += 2) assert.equal(kernel.cancel(handles[id]!), true);
    for (let id = 0; id < 100; id += 2) assert.equal(kernel.cancel(handles[id]!), false, 'cancelled twice');
    assert.equal(kernel.cancel(NO_EVENT), false);
    assert.equal(kernel.cancel(123.5 as EventHandle), false);
    kernel.run();
    assert.ok(fired.every((id) => id % 2 === 1));
    assert.equal(fired.length, 50);
    assert.equal(kernel.cancel(handles[1]!), false, 'already fired');
    // The slot of a fired event is reused; its old handle must not cancel the new occupant.
    const fresh = kernel.schedule(kind, kernel.now() + 1, 999, 0);
    for (const handle of handles) kernel.cancel(handle);
    assert.equal(kernel.pending, 1);
    assert.equal(kernel.cancel(fresh), true);
  });
});

describe('event storage', () => {
  it('stays bounded when a timeout is armed and cancelled over and over', () => {
    const heap = new EventHeap(16);
    let maxEntries = 0;
    for (let round = 0; round < 100_000; round++) {
      const handle = heap.push(1_000_000 + round, 1, round, 0);
      const slot = heap.liveSlotOf(handle);
      assert.ok(slot >= 0);
      heap.cancelSlot(slot);
      maxEntries = Math.max(maxEntries, heap.entries);
    }
    assert.equal(heap.live, 0);
    assert.ok(maxEntries <= 2 * 0 + 66, `entries grew to ${maxEntries}`);
    assert.equal(heap.takeNext(Number.MAX_SAFE_INTEGER), TAKE_EMPTY);
  });

  it('compacts to within twice the live events plus a constant, and keeps order after compaction', () => {
    const heap = new EventHeap(16);
    const handles: EventHandle[] = [];
    for (let index = 0; index < 5000; index++) handles.push(heap.push(10 + (index % 97), 1, index, 0));
    for (let index = 0; index < 5000; index++) {
      if (index % 10 !== 0) heap.cancelSlot(heap.liveSlotOf(handles[index]!));
      assert.ok(heap.entries <= 2 * heap.live + 65, `entries ${heap.entries} for ${heap.live} live`);
    }
    assert.equal(heap.live, 500);
    const seen: Array<readonly [number, number]> = [];
    for (;;) {
      const kind = heap.takeNext(Number.MAX_SAFE_INTEGER);
      if (kind === TAKE_EMPTY) break;
      seen.push([heap.taken[0]!, heap.taken[1]!]);
    }
    const expected = Array.from({ length: 500 }, (_, i) => [10 + ((i * 10) % 97), i * 10] as const).sort(
      (x, y) => x[0] - y[0] || x[1] - y[1],
    );
    assert.deepEqual(seen, expected);
  });
});
