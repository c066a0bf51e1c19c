/**
 * Peer messages bigger than one datagram (src/platform/live/net/fragments.ts): the fragmenter's
 * frames are valid PEER|FRAGMENT frames within the limit, and the reassembler, fed any pattern of
 * the fragments — split at any size, duplicated, reordered, dropped, interleaved with other
 * messages and peers, with headers or pieces damaged — hands out exactly the messages that were
 * sent or nothing, never a wrong one; keeps its reserved bytes under its caps at every step; and
 * counts every fragment it does not use exactly once, by reason. Seeds are fixed and printed by
 * fast-check on failure.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../../../../src/errors.ts';
import {
  FRAGMENT_HEADER_BYTES,
  type FragmentDropReason,
  fragmentCount,
  fragmentMessage,
  MAX_FRAGMENTS,
  maxPieceBytes,
  Reassembler,
  type ReassemblyLimits,
} from '../../../../src/platform/live/net/fragments.ts';
import {
  decodeFrame,
  FLAG_FRAGMENT,
  FLAG_PEER,
  HEADER_BYTES,
} from '../../../../src/platform/live/net/wire.ts';

const SEED = 20_261_122;

/** A reassembler with its drops tallied, and the fragments' payloads as the node hands them over. */
function harness(limits: ReassemblyLimits) {
  const drops = new Map<FragmentDropReason, number>();
  const reassembler = new Reassembler(limits, (reason, fragments) =>
    drops.set(reason, (drops.get(reason) ?? 0) + fragments),
  );
  const dropped = (): number => [...drops.values()].reduce((a, b) => a + b, 0);
  return { reassembler, drops, dropped };
}

/** What the node passes to `accept` for a sealed fragment frame (it checked the frame's CRC). */
function fields(frame: Uint8Array) {
  const decoded = decodeFrame(frame, 1 << 16);
  assert.ok(decoded.ok, 'a fragment is a valid frame');
  return decoded.frame;
}

/**
 * Messages of any length up to `maxBytes`, with bytes from a small PRNG: fast-check's own byte
 * arrays stay short (its default size), and a message of zeros would hide a missing piece.
 */
function messageOf(maxBytes: number): fc.Arbitrary<Uint8Array> {
  return fc
    .tuple(fc.integer({ min: 1, max: maxBytes }), fc.integer({ min: 1, max: 0x7fff_ffff }))
    .map(([length, seed]) => {
      const bytes = new Uint8Array(length);
      let x = seed;
      for (let i = 0; i < length; i++) {
        x = (Math.imul(x, 1_103_515_245) + 12_345) >>> 0;
        bytes[i] = x >>> 24;
      }
      return bytes;
    });
}

const LIMITS: ReassemblyLimits = {
  maxMessageBytes: 4096,
  maxBytesPerPeer: 8192,
  maxBytesTotal: 12_288,
  expireMs: 100,
};

describe('fragmentMessage', () => {
  it('cuts a message into PEER|FRAGMENT frames within the limit whose pieces, in order, are the message', () => {
    fc.assert(
      fc.property(
        messageOf(3000),
        fc.integer({ min: HEADER_BYTES + FRAGMENT_HEADER_BYTES + 1, max: 700 }),
        fc.integer({ min: 0, max: 0xffff_ffff }),
        (message, maxFrameBytes, messageId) => {
          const frames = fragmentMessage(
            { targetActorId: 7, clientId: 9, messageId },
            message,
            maxFrameBytes,
          );
          assert.equal(frames.length, fragmentCount(message.length, maxFrameBytes));
          const joined: number[] = [];
          frames.forEach((frame, index) => {
            assert.ok(frame.length <= maxFrameBytes);
            const decoded = fields(frame);
            assert.equal(decoded.kind, 'fragment');
            assert.equal(decoded.flags, FLAG_PEER | FLAG_FRAGMENT);
            assert.equal(decoded.requestId, messageId);
            assert.equal(decoded.targetActorId, 7);
            assert.equal(decoded.clientId, 9);
            const payload = decoded.payload;
            assert.equal(payload[0]! | (payload[1]! << 8), index);
            assert.equal(payload[2]! | (payload[3]! << 8), frames.length);
            assert.ok(payload.length > FRAGMENT_HEADER_BYTES, 'no empty piece');
            joined.push(...payload.subarray(FRAGMENT_HEADER_BYTES));
          });
          assert.deepEqual(Uint8Array.from(joined), message);
        },
      ),
      { numRuns: 200, seed: SEED },
    );
  });

  it('refuses an empty message, a frame with no room for a piece, and more than 65 535 fragments', () => {
    assert.throws(() =>
      fragmentMessage({ targetActorId: 1, clientId: 0, messageId: 1 }, new Uint8Array(0), 1000),
    );
    assert.throws(() =>
      fragmentMessage(
        { targetActorId: 1, clientId: 0, messageId: 1 },
        new Uint8Array(10),
        HEADER_BYTES + FRAGMENT_HEADER_BYTES,
      ),
    );
    const maxFrameBytes = HEADER_BYTES + FRAGMENT_HEADER_BYTES + 1;
    assert.equal(maxPieceBytes(maxFrameBytes), 1);
    assert.throws(
      () =>
        fragmentMessage(
          { targetActorId: 1, clientId: 0, messageId: 1 },
          new Uint8Array(MAX_FRAGMENTS + 1),
          maxFrameBytes,
        ),
      /more than 65535/,
    );
  });
});

/** One message's fragments delivered in some order, some dropped, some repeated. */
const deliveryPattern = fc.record({
  message: messageOf(2000),
  maxFrameBytes: fc.integer({ min: 60, max: 600 }),
  // Each fragment index: how many copies arrive (0: lost; only when `lossy`, half the runs), and
  // sort keys that shuffle them.
  lossy: fc.boolean(),
  copies: fc.array(fc.constantFrom(1, 1, 1, 2, 3, 0), { minLength: 200, maxLength: 200 }),
  order: fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 800, maxLength: 800 }),
});

describe('Reassembler', () => {
  it('any drop/duplicate/reorder pattern of one message yields the exact message once, or nothing', () => {
    fc.assert(
      fc.property(deliveryPattern, ({ message, maxFrameBytes, lossy, copies: drawn, order }) => {
        const copies = lossy ? drawn : drawn.map((c) => Math.max(1, c));
        const frames = fragmentMessage(
          { targetActorId: 3, clientId: 5, messageId: 42 },
          message,
          maxFrameBytes,
        );
        const arrivals: Uint8Array[] = [];
        frames.forEach((frame, index) => {
          for (let c = 0; c < copies[index % copies.length]!; c++) arrivals.push(frame);
        });
        const keyed = arrivals.map((frame, i) => ({ frame, key: order[i % order.length]! + i * 1e-9 }));
        keyed.sort((a, b) => a.key - b.key);
        const { reassembler, dropped } = harness({ ...LIMITS, maxMessageBytes: 2000 });
        const out: Uint8Array[] = [];
        let now = 0;
        for (const { frame } of keyed) {
          const f = fields(frame);
          const whole = reassembler.accept(
            'peer-a',
            f.targetActorId,
            f.clientId,
            f.requestId,
            f.payload,
            now++,
          );
          if (whole !== undefined) {
            assert.equal(whole.targetActorId, 3);
            assert.equal(whole.clientId, 5);
            out.push(whole.message);
          }
          assert.ok(reassembler.bytesHeld <= message.length);
        }
        const complete = frames.every((_, index) => copies[index % copies.length]! > 0);
        if (complete) {
          assert.equal(out.length, 1, 'every fragment arrived: the message, once');
          assert.deepEqual(out[0], message);
          assert.equal(reassembler.bytesHeld, 0);
        } else {
          assert.equal(out.length, 0, 'a fragment is missing: nothing');
        }
        // Whatever is still partial goes when it expires; then every fragment that was not part of
        // the delivered message has been counted once.
        reassembler.expire(now + LIMITS.expireMs);
        assert.equal(reassembler.bytesHeld, 0);
        assert.equal(reassembler.partialMessages, 0);
        assert.equal(dropped(), arrivals.length - (complete ? frames.length : 0));
      }),
      { numRuns: 300, seed: SEED + 1 },
    );
  });

  it('interleaved messages of several peers, with reused ids and damaged fragments: only exact messages, memory within its caps', () => {
    const sent = fc.record({
      peer: fc.constantFrom('p0', 'p1', 'p2'),
      // Few ids, so that peers reuse each other's and, sometimes, their own.
      messageId: fc.integer({ min: 0, max: 5 }),
      message: messageOf(3000),
    });
    const event = fc.record({
      pick: fc.nat(),
      // 0: deliver as is; 1: flip a byte of the piece; 2: flip a byte of the fragment header;
      // 3: drop; 4: deliver twice.
      action: fc.constantFrom(0, 0, 0, 0, 1, 2, 3, 4),
      at: fc.nat(),
      advanceMs: fc.integer({ min: 0, max: 30 }),
    });
    fc.assert(
      fc.property(
        fc.array(sent, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 80, max: 500 }),
        fc.array(event, { minLength: 1, maxLength: 400 }),
        (messages, maxFrameBytes, events) => {
          const queues = messages.map(({ peer, messageId, message }, i) =>
            fragmentMessage({ targetActorId: i, clientId: 100 + i, messageId }, message, maxFrameBytes).map(
              (frame) => ({ peer, frame }),
            ),
          );
          const { reassembler, dropped } = harness(LIMITS);
          let now = 0;
          let accepted = 0;
          let delivered = 0;
          for (const { pick, action, at, advanceMs } of events) {
            const live = queues.filter((q) => q.length > 0);
            if (live.length === 0) break;
            const queue = live[pick % live.length]!;
            const next = queue.shift()!;
            now += advanceMs;
            reassembler.expire(now);
            if (action === 3) continue;
            const f = fields(next.frame);
            const payload = f.payload.slice();
            if (action === 1)
              payload[FRAGMENT_HEADER_BYTES + (at % (payload.length - FRAGMENT_HEADER_BYTES))]! ^= 1;
            if (action === 2) payload[at % FRAGMENT_HEADER_BYTES]! ^= 1 << (at % 8);
            for (let copy = 0; copy < (action === 4 ? 2 : 1); copy++) {
              accepted++;
              const whole = reassembler.accept(
                next.peer,
                f.targetActorId,
                f.clientId,
                f.requestId,
                payload,
                now,
              );
              if (whole !== undefined) {
                const original = messages[whole.targetActorId];
                assert.ok(original !== undefined, 'a rebuilt message names a message that was sent');
                assert.equal(whole.clientId, 100 + whole.targetActorId);
                assert.deepEqual(
                  whole.message,
                  original.message,
                  'a rebuilt message is exactly the one sent',
                );
                delivered += fragmentCount(original.message.length, maxFrameBytes);
              }
              assert.ok(reassembler.bytesHeld <= LIMITS.maxBytesTotal, 'total cap');
              for (const peer of ['p0', 'p1', 'p2'])
                assert.ok(reassembler.bytesHeldBy(peer) <= LIMITS.maxBytesPerPeer, 'per-peer cap');
            }
          }
          reassembler.expire(now + LIMITS.expireMs);
          assert.equal(reassembler.bytesHeld, 0);
          assert.equal(dropped(), accepted - delivered, 'every fragment not delivered is counted once');
        },
      ),
      { numRuns: 300, seed: SEED + 2 },
    );
  });

  it('counts each discard under its reason', () => {
    const { reassembler, drops } = harness(LIMITS);
    const message = Uint8Array.from({ length: 1000 }, (_, i) => i & 0xff);
    const frames = fragmentMessage({ targetActorId: 1, clientId: 2, messageId: 10 }, message, 300).map(
      fields,
    );
    assert.equal(frames.length, 4);
    const give = (peer: string, f: ReturnType<typeof fields>, nowMs: number, payload = f.payload) =>
      reassembler.accept(peer, f.targetActorId, f.clientId, f.requestId, payload, nowMs);

    // Duplicate, then complete, then a late copy.
    assert.equal(give('a', frames[0]!, 0), undefined);
    assert.equal(give('a', frames[0]!, 0), undefined);
    assert.equal(drops.get('fragment-duplicate'), 1);
    for (const f of frames.slice(1, 3)) assert.equal(give('a', f, 0), undefined);
    assert.deepEqual(give('a', frames[3]!, 0)?.message, message);
    assert.equal(give('a', frames[2]!, 1), undefined);
    assert.equal(drops.get('fragment-late'), 1);

    // The same id from another peer is another message; two pieces, then it expires.
    give('b', frames[0]!, 10);
    give('b', frames[1]!, 10);
    assert.equal(reassembler.bytesHeldBy('b'), 1000);
    reassembler.expire(10 + LIMITS.expireMs - 1);
    assert.equal(reassembler.partialMessages, 1);
    reassembler.expire(10 + LIMITS.expireMs);
    assert.equal(drops.get('fragment-expired'), 2);
    assert.equal(reassembler.bytesHeld, 0);

    // A fragment that disagrees with its partial (another length under the same id): both go.
    const other = fragmentMessage(
      { targetActorId: 1, clientId: 2, messageId: 11 },
      new Uint8Array(900),
      300,
    ).map(fields);
    const same = fragmentMessage({ targetActorId: 1, clientId: 2, messageId: 11 }, message, 300).map(fields);
    give('c', same[0]!, 200);
    give('c', other[1]!, 200);
    assert.equal(drops.get('fragment-mismatch'), 2);

    // Damaged piece: every piece arrives, the message CRC fails, nothing is handed out.
    const bad = fragmentMessage({ targetActorId: 1, clientId: 2, messageId: 12 }, message, 300).map(fields);
    const damaged = bad[2]!.payload.slice();
    damaged[FRAGMENT_HEADER_BYTES + 5]! ^= 0x40;
    give('d', bad[0]!, 300);
    give('d', bad[1]!, 300);
    give('d', bad[2]!, 300, damaged);
    assert.equal(give('d', bad[3]!, 300), undefined);
    assert.equal(drops.get('fragment-bad-checksum'), 4);

    // Malformed headers: index ≥ count, a piece of the wrong length, fewer bytes than a header.
    const wrongIndex = bad[0]!.payload.slice();
    wrongIndex[0] = 9;
    give('e', bad[0]!, 300, wrongIndex);
    give('e', bad[0]!, 300, bad[0]!.payload.subarray(0, bad[0]!.payload.length - 1));
    give('e', bad[0]!, 300, new Uint8Array(5));
    assert.equal(drops.get('fragment-malformed'), 3);

    // Too large for the limit on its own.
    const big = fragmentMessage(
      { targetActorId: 1, clientId: 2, messageId: 13 },
      new Uint8Array(5000),
      1400,
    ).map(fields);
    give('f', big[0]!, 300);
    assert.equal(drops.get('fragment-too-large'), 1);
    assert.equal(reassembler.bytesHeld, 0);
  });

  it('a new message evicts the oldest partials of its peer, then of anyone, to stay within the caps', () => {
    const { reassembler, drops } = harness(LIMITS);
    const piecesOf = (messageId: number, bytes: number) =>
      fragmentMessage({ targetActorId: 1, clientId: 0, messageId }, new Uint8Array(bytes), 1000).map(fields);
    const give = (peer: string, f: ReturnType<typeof fields>) =>
      reassembler.accept(peer, f.targetActorId, f.clientId, f.requestId, f.payload, 0);
    // Peer a: two partials of 4000 bytes (its cap is 8192), one piece each.
    give('a', piecesOf(1, 4000)[0]!);
    give('a', piecesOf(2, 4000)[0]!);
    assert.equal(reassembler.bytesHeldBy('a'), 8000);
    // A third pushes out a's oldest.
    give('a', piecesOf(3, 4000)[0]!);
    assert.equal(drops.get('fragment-evicted'), 1);
    assert.equal(reassembler.bytesHeldBy('a'), 8000);
    // The evicted message's later pieces are late, not a fresh partial.
    give('a', piecesOf(1, 4000)[1]!);
    assert.equal(drops.get('fragment-late'), 1);
    // Peer b fills the total cap (12 288): a's oldest partial goes.
    give('b', piecesOf(1, 4000)[0]!);
    give('b', piecesOf(2, 3000)[0]!);
    assert.equal(drops.get('fragment-evicted'), 2);
    assert.ok(reassembler.bytesHeld <= LIMITS.maxBytesTotal);
    assert.equal(reassembler.bytesHeldBy('a'), 4000);
    assert.equal(reassembler.bytesHeldBy('b'), 7000);
  });

  it('refuses limits that are not positive', () => {
    assert.throws(
      () => new Reassembler({ ...LIMITS, expireMs: 0 }, () => {}),
      (error: unknown) =>
        error instanceof ConfigError &&
        error.code === 'IPIPE_ERR_CONFIG_INVALID' &&
        /expireMs/.test(error.message),
    );
  });
});
