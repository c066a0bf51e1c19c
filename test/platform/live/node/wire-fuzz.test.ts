/**
 * Fuzzing a live node's wire (issue 4): bursts of random and mutated datagrams — short, long,
 * bad magic, bad checksum, unknown flags, truncated headers, replies sent to a server, requests
 * for actors the node does not host — while a well-formed client keeps requests in flight. The
 * node never crashes, counts every bad datagram under its reason, and answers the good traffic.
 */
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { test } from 'node:test';
import fc from 'fast-check';
import { actorId } from '../../../../src/ids.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import {
  decodeFrame,
  encodeFrame,
  type FrameKind,
  frameSize,
  HEADER_BYTES,
} from '../../../../src/platform/live/net/wire.ts';
import { LiveNode } from '../../../../src/platform/live/node/live-node.ts';
import { echo } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const ECHO = 1;

function frame(kind: FrameKind, actor: number, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(frameSize(payload.length));
  encodeFrame(bytes, { kind, targetActorId: actor, requestId: 7, clientId: 9 }, payload);
  return bytes;
}

interface Case {
  readonly bytes: Uint8Array;
  readonly reason: string;
  /** Random bytes, not a mutated frame: the test checks these reach past the length check. */
  readonly random?: true;
}

// size 'max' on the byte arrays: fast-check's default size stops at 10 bytes, so random datagrams
// were all shorter than the 24-byte header (every one 'short') and payloads at most 10 bytes.
const payload = fc.uint8Array({ maxLength: 100, size: 'max' });
const caseArb: fc.Arbitrary<Case> = fc.oneof(
  fc
    .uint8Array({ maxLength: 80, size: 'max' })
    .map((bytes): Case => {
      const decoded = decodeFrame(bytes);
      return {
        bytes,
        random: true,
        reason: decoded.ok
          ? decoded.frame.kind === 'request'
            ? 'unknown-actor'
            : 'unexpected-kind'
          : decoded.reason,
      };
    })
    .filter(
      (c) =>
        c.reason !== 'unknown-actor' ||
        !decodeFrame(c.bytes).ok ||
        (decodeFrame(c.bytes) as { ok: true; frame: { targetActorId: number } }).frame.targetActorId !== ECHO,
    ),
  fc.nat({ max: HEADER_BYTES - 1 }).map(
    (length): Case => ({
      bytes: frame('request', ECHO, new Uint8Array(4)).slice(0, length),
      reason: 'short',
    }),
  ),
  fc.uint8Array({ minLength: 1500, maxLength: 2000 }).map((bytes): Case => ({ bytes, reason: 'too-large' })),
  payload.map((p): Case => {
    const bytes = frame('request', ECHO, p);
    bytes[0] = 0x00;
    return { bytes, reason: 'bad-magic' };
  }),
  fc.tuple(payload, fc.nat()).map(([p, pick]): Case => {
    const bytes = frame('request', ECHO, p);
    const at = 20 + (pick % (bytes.length - 20));
    bytes[at]! ^= 1 << (pick % 8);
    return { bytes, reason: 'bad-checksum' };
  }),
  payload.map((p): Case => ({ bytes: frame('reply', ECHO, p), reason: 'unexpected-kind' })),
  fc
    .tuple(payload, fc.integer({ min: 2, max: 1_000 }))
    .map(([p, actor]): Case => ({ bytes: frame('request', actor, p), reason: 'unknown-actor' })),
);

// Both ingress modes: the controller's wire checks, and NIC core 0's (counted in its shared block).
for (const ingress of ['controller', 'core'] as const)
  test(`ingress ${ingress}: bad datagrams are counted by reason and never stop the node from serving`, async () => {
    const node = await LiveNode.start({
      ingress,
      warmSpare: false, // only the watchdog needs it (socket-core.test.ts)
      catalog: [{ id: actorId(ECHO), name: 'echo', module: MODULE, exportName: 'echo' }],
      nicCores: 1,
      hostCores: 1,
      scheduler: { enableMigration: false },
    });
    assert.equal(node.ingress, ingress);
    const fuzzer = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => fuzzer.bind(0, '127.0.0.1', resolve));
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: node.address.port,
      timeoutMs: 500,
      retries: 5,
    });
    const replies = echo.replies;
    assert.ok(replies);
    let stop = false;
    let answered = 0;
    const worker = async (lane: number) => {
      for (let n = 0; !stop; n++) {
        const data = new Uint8Array([lane, n & 0xff]);
        const reply: { data: Uint8Array } = await client.call(ECHO, echo.messages, replies, {
          type: 'echo',
          data,
        });
        assert.deepEqual([...reply.data], [...data]);
        answered++;
      }
    };
    const workers = Array.from({ length: 4 }, (_, lane) => worker(lane));
    const total = () => [...node.nic.drops.values()].reduce((a, b) => a + b, 0);
    const randomReasons = new Set<string>();
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(caseArb, { minLength: 1, maxLength: 15 }), async (cases) => {
          const before = new Map(node.nic.drops);
          const expected = new Map<string, number>();
          for (const c of cases) {
            if (c.random === true) randomReasons.add(c.reason);
            expected.set(c.reason, (expected.get(c.reason) ?? 0) + 1);
            fuzzer.send(c.bytes, node.address.port, '127.0.0.1');
          }
          const target = total() + cases.length;
          const deadline = performance.now() + 5_000;
          while (total() < target) {
            if (performance.now() > deadline) assert.fail(`counted ${total()} drops, expected ${target}`);
            await new Promise((resolve) => setTimeout(resolve, 1));
          }
          for (const [reason, count] of expected) {
            assert.equal((node.nic.drops.get(reason) ?? 0) - (before.get(reason) ?? 0), count, reason);
          }
        }),
        { numRuns: 80, seed: 4_242 },
      );
      const answeredBefore = answered;
      await new Promise((resolve) => setTimeout(resolve, 100));
      assert.ok(answered > answeredBefore, 'still serving after the fuzzing');
    } finally {
      stop = true;
      await Promise.all(workers);
      await client.close();
      fuzzer.close();
      await node.stop();
    }
    assert.ok(answered > 100, `only ${answered} well-formed requests answered`);
    // Random datagrams got past the length check to the header's fields.
    assert.ok(randomReasons.has('bad-magic'), `random datagrams only gave ${[...randomReasons].join(', ')}`);
  });
