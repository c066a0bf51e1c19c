/**
 * The replica wire (src/apps/rkv/cluster/peer-wire.ts): every message kind survives encode →
 * decode whatever the chunking of the stream, and damage (a flipped byte, a lost-framing length)
 * is refused with ClusterFrameError instead of being delivered.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import type { ClusterCommand, ClusterResult } from '../../../../src/apps/rkv/cluster/commands.ts';
import { clusterCodec, shardOf } from '../../../../src/apps/rkv/cluster/commands.ts';
import { ClusterFrameError } from '../../../../src/apps/rkv/cluster/errors.ts';
import {
  encodeWireMessage,
  FrameDecoder,
  type WireMessage,
} from '../../../../src/apps/rkv/cluster/peer-wire.ts';
import type { Ballot, ClientId, ReplicaId } from '../../../../src/apps/rkv/paxos/types.ts';

const seed = Number(process.env['IPIPE_TEST_SEED'] ?? Date.now() % 1_000_000);
process.stderr.write(`peer-wire seed ${seed} (IPIPE_TEST_SEED=${seed} reproduces)\n`);

const bytes = fc.uint8Array({ maxLength: 24 });
const command: fc.Arbitrary<ClusterCommand> = fc.oneof(
  fc.record({ op: fc.constant('get' as const), key: bytes }),
  fc.record({
    op: fc.constant('set' as const),
    key: bytes,
    value: bytes,
    condition: fc.constantFrom('always' as const, 'if-absent' as const, 'if-present' as const),
  }),
  fc.record({
    op: fc.constantFrom('del' as const, 'exists' as const, 'mget' as const),
    keys: fc.array(bytes, { maxLength: 4 }),
  }),
  fc.constant({ op: 'dbsize' as const }),
);
const result: fc.Arbitrary<ClusterResult> = fc.oneof(
  fc.record({ op: fc.constant('value' as const), value: fc.option(bytes, { nil: null }) }),
  fc.record({
    op: fc.constant('values' as const),
    values: fc.array(fc.option(bytes, { nil: null }), { maxLength: 4 }),
  }),
  fc.record({ op: fc.constant('count' as const), count: fc.nat() }),
  fc.record({ op: fc.constant('written' as const), written: fc.boolean() }),
);
const id = fc.nat({ max: 31 }).map((value) => value as ReplicaId);
const ballot = fc.nat({ max: 1e9 }).map((value) => value as Ballot);
const slot = fc.nat({ max: 1e9 });
const client = fc.nat({ max: 2 ** 40 }).map((value) => value as ClientId);
const logCommand = fc.oneof(
  fc.constant({ kind: 'noop' as const }),
  fc.record({ kind: fc.constant('request' as const), clientId: client, seq: fc.nat(), payload: command }),
);

const message: fc.Arbitrary<WireMessage> = fc.oneof(
  fc.record({
    kind: fc.constant('peer' as const),
    from: fc.nat({ max: 31 }),
    shard: fc.nat({ max: 63 }),
    message: fc.oneof(
      fc.record({ type: fc.constant('prepare' as const), from: id, ballot, fromSlot: slot }),
      fc.record({
        type: fc.constant('promise' as const),
        from: id,
        ballot,
        truncatedThrough: slot,
        entries: fc.array(fc.record({ slot, ballot, command: logCommand, chosen: fc.boolean() }), {
          maxLength: 3,
        }),
      }),
      fc.record({
        type: fc.constant('accept' as const),
        from: id,
        ballot,
        entries: fc.array(fc.record({ slot, command: logCommand }), { maxLength: 3 }),
        commitThrough: slot,
      }),
      fc.record({
        type: fc.constant('accepted' as const),
        from: id,
        ballot,
        slots: fc.array(slot, { maxLength: 4 }),
      }),
      fc.record({ type: fc.constant('reject' as const), from: id, ballot, promised: ballot }),
      fc.record({
        type: fc.constantFrom('commit' as const, 'heartbeat' as const),
        from: id,
        ballot,
        commitThrough: slot,
      }),
      fc.record({ type: fc.constant('heartbeatAck' as const), from: id, ballot, appliedThrough: slot }),
      fc.record({ type: fc.constant('catchupRequest' as const), from: id, fromSlot: slot }),
      fc.record({
        type: fc.constant('catchup' as const),
        from: id,
        snapshot: fc.option(
          fc.record({
            lastIncludedSlot: slot,
            state: bytes,
            sessions: fc.array(fc.record({ clientId: client, seq: fc.nat(), result }), { maxLength: 2 }),
          }),
          { nil: null },
        ),
        entries: fc.array(fc.record({ slot, command: logCommand }), { maxLength: 3 }),
      }),
    ),
  }),
  fc.record({
    kind: fc.constant('request' as const),
    from: fc.nat({ max: 31 }),
    shard: fc.nat({ max: 63 }),
    request: fc.record({ type: fc.constant('request' as const), clientId: client, seq: fc.nat(), command }),
  }),
  fc.record({
    kind: fc.constant('reply' as const),
    from: fc.nat({ max: 31 }),
    shard: fc.nat({ max: 63 }),
    reply: fc.oneof(
      fc.record({ type: fc.constant('reply' as const), clientId: client, seq: fc.nat(), result }),
      fc.record({
        type: fc.constant('redirect' as const),
        clientId: client,
        seq: fc.nat(),
        leaderHint: fc.option(id, { nil: null }),
      }),
    ),
  }),
) as fc.Arbitrary<WireMessage>;

/** Uint8Array equality through JSON would lose types; compare structurally instead. */
function normalise(value: unknown): unknown {
  if (value instanceof Uint8Array) return { bytes: [...value] };
  if (Array.isArray(value)) return value.map(normalise);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, normalise(inner)]));
  }
  return value;
}

test('every message survives the wire, in order, however the stream is cut', () => {
  fc.assert(
    fc.property(
      fc.array(message, { minLength: 1, maxLength: 8 }),
      fc.array(fc.nat(), { maxLength: 6 }),
      (messages, cuts) => {
        const stream = Buffer.concat(messages.map(encodeWireMessage));
        const points = [...new Set(cuts.map((cut) => cut % (stream.length + 1)))].sort((a, b) => a - b);
        const decoder = new FrameDecoder();
        const received: WireMessage[] = [];
        let from = 0;
        for (const point of [...points, stream.length]) {
          received.push(...decoder.push(stream.subarray(from, point)));
          from = point;
        }
        assert.deepEqual(normalise(received), normalise(messages));
        assert.equal(decoder.buffered, 0);
      },
    ),
    { seed, numRuns: 300 },
  );
});

test('a flipped byte anywhere in a frame is refused, never delivered', () => {
  fc.assert(
    fc.property(message, fc.nat(), fc.integer({ min: 1, max: 255 }), (original, position, mask) => {
      const frame = Buffer.from(encodeWireMessage(original));
      const at = position % frame.length;
      frame[at] = frame[at]! ^ mask;
      const decoder = new FrameDecoder();
      let delivered: WireMessage[] = [];
      try {
        delivered = decoder.push(frame);
      } catch (error) {
        assert.ok(error instanceof ClusterFrameError, String(error));
        assert.equal(error.code, 'IPIPE_ERR_CLUSTER_FRAME');
        return;
      }
      // A damaged length field can only make the decoder wait for more bytes.
      assert.equal(delivered.length, 0, `damage at byte ${at} was delivered`);
      assert.ok(at < 4, `damage at byte ${at} went unnoticed`);
    }),
    { seed, numRuns: 300 },
  );
});

test('the log codec round-trips commands and results; shards are stable and in range', () => {
  fc.assert(
    fc.property(command, result, fc.integer({ min: 1, max: 64 }), (cmd, res, shards) => {
      assert.deepEqual(
        normalise(clusterCodec.decodeCommand(clusterCodec.encodeCommand(cmd))),
        normalise(cmd),
      );
      assert.deepEqual(normalise(clusterCodec.decodeResult(clusterCodec.encodeResult(res))), normalise(res));
      if (cmd.op === 'get') {
        const shard = shardOf(cmd.key, shards);
        assert.ok(shard >= 0 && shard < shards);
        assert.equal(shardOf(Uint8Array.from(cmd.key), shards), shard);
      }
    }),
    { seed, numRuns: 300 },
  );
  // Pinned values (FNV-1a 32-bit): placement is part of the data directory's format.
  assert.deepEqual(
    ['a', 'b', 'foo'].map((key) => shardOf(new TextEncoder().encode(key), 7)),
    [0xe40c292c % 7, 0xe70c2de5 % 7, 0xa9f37ed7 % 7],
  );
});
