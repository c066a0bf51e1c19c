/**
 * The controller ↔ core protocol (src/platform/live/node/core-protocol.ts): a request's work item,
 * written straight into a ring buffer (LiveRequest.writeWork), takes exactly `workSize()` bytes and
 * reads back as what was written; a REPLY_WORK output answers the work item's own origin; and a
 * reader over a window of a larger buffer (a ring record where it lies) never reads past the window.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { Origin } from '../../../../src/actor/envelope.ts';
import { actorId } from '../../../../src/ids.ts';
import {
  FrameBuilder,
  FrameReader,
  OUT_REPLY,
  OUT_REPLY_WORK,
  readOutputs,
  WORK_EXEC,
  WORK_TIMER,
} from '../../../../src/platform/live/node/core-protocol.ts';
import { LiveRequest } from '../../../../src/platform/live/node/live-request.ts';

const SEED = 4_711;

const clientOrigin: fc.Arbitrary<Origin> = fc.record(
  {
    kind: fc.constant('client' as const),
    endpoint: fc.record(
      {
        address: fc.oneof(fc.ipV4(), fc.ipV6(), fc.string({ maxLength: 30 })),
        port: fc.integer({ min: 0, max: 65_535 }),
      },
      { noNullPrototype: true },
    ),
    requestId: fc.nat({ max: 0xffff_ffff }),
  },
  { noNullPrototype: true },
);
const origin: fc.Arbitrary<Origin> = fc.oneof(
  fc.constant<Origin>({ kind: 'none' }),
  clientOrigin,
  fc.record(
    {
      kind: fc.constant('actor' as const),
      actor: fc.integer({ min: 0, max: 1_000 }).map(actorId),
      requestId: fc.nat({ max: 0xffff_ffff }),
      parent: clientOrigin,
    },
    { noNullPrototype: true },
  ),
);

test('a work item written in place takes workSize() bytes and reads back whole', () => {
  process.stdout.write(`# fast-check seed ${SEED}\n`);
  fc.assert(
    fc.property(
      fc.integer({ min: 1, max: 0xffff }),
      origin,
      fc.uint8Array({ maxLength: 200 }),
      fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 0xffff_ffff })),
      fc.nat({ max: 64 }),
      (actor, from, payload, timerId, offset) => {
        const request = new LiveRequest(actorId(actor), from, payload, timerId);
        const size = request.workSize();
        const bytes = new Uint8Array(offset + size + 16).fill(0xee);
        assert.equal(request.writeWork(bytes, offset), offset + size);
        assert.ok(
          bytes.subarray(offset + size).every((b) => b === 0xee),
          'nothing written past the item',
        );
        const reader = new FrameReader().resetWindow(bytes, offset, offset + size);
        assert.equal(reader.u8(), timerId === 0 ? WORK_EXEC : WORK_TIMER);
        reader.u32(); // tag
        assert.equal(reader.u32(), actor);
        if (timerId === 0) {
          assert.deepEqual(reader.origin(), from);
          assert.deepEqual(reader.bytesField(), payload);
        } else assert.equal(reader.u32(), timerId);
        assert.ok(reader.ok);
        assert.equal(reader.offset, offset + size, 'the reader ends where the item ends');
      },
    ),
    { numRuns: 300, seed: SEED },
  );
});

test("REPLY_WORK answers the work item's origin; REPLY carries its own", () => {
  const work: Origin = { kind: 'client', endpoint: { address: '10.1.2.3', port: 9_000 }, requestId: 77 };
  const other: Origin = { kind: 'client', endpoint: { address: '10.9.9.9', port: 1 }, requestId: 5 };
  const out = new FrameBuilder();
  out.u8(OUT_REPLY_WORK);
  out.bytesField(Uint8Array.of(1, 2, 3));
  out.u8(OUT_REPLY);
  out.origin(other);
  out.bytesField(Uint8Array.of(4));
  const outputs = readOutputs(new FrameReader().reset(out.frame), 2, work);
  assert.deepEqual(outputs, [
    { kind: 'reply', origin: work, message: Uint8Array.of(1, 2, 3) },
    { kind: 'reply', origin: other, message: Uint8Array.of(4) },
  ]);
});

test('a windowed reader refuses reads past its window even where the buffer goes on', () => {
  const out = new FrameBuilder();
  out.origin({ kind: 'client', endpoint: { address: '127.0.0.1', port: 80 }, requestId: 1 });
  out.u32(0xdead_beef);
  out.f64(1.5);
  const bytes = out.frame;
  const end = bytes.length;
  for (let cut = 0; cut < end; cut++) {
    // The window stops at `cut`; the bytes after it are still in the buffer.
    const reader = new FrameReader().resetWindow(bytes, 0, cut);
    reader.origin();
    reader.u32();
    reader.f64();
    assert.equal(reader.ok, false, `a window of ${cut} bytes is short`);
  }
  const whole = new FrameReader().resetWindow(bytes, 0, end);
  assert.equal(whole.origin().kind, 'client');
  assert.equal(whole.u32(), 0xdead_beef);
  assert.equal(whole.f64(), 1.5);
  assert.equal(whole.peekU8(), -1);
  assert.ok(whole.ok);
});
