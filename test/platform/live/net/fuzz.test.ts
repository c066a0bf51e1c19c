/**
 * Fuzzing the protocol echo server over real UDP: fast-check sends bursts of random and mutated
 * datagrams (empty, truncated header, truncated payload, trailing bytes, oversize, bad magic, bad
 * version, unknown flags, flipped bits, replies sent to a server) while a well-formed client keeps
 * requests in flight. The server must never crash, must count every bad datagram under the reason
 * its construction implies, and must answer every well-formed request.
 */

import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../../../src/dmo/crc32c.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { startEchoServer } from '../../../../src/platform/live/net/echo-server.ts';
import {
  DEFAULT_MAX_FRAME_BYTES,
  DROP_REASONS,
  type DropReason,
  decodeFrame,
  encodeFrame,
  type FrameKind,
  frameSize,
  HEADER_BYTES,
} from '../../../../src/platform/live/net/wire.ts';

/** What the server should do with a datagram: count a drop for this reason, or accept it. */
type Expected = DropReason | 'accepted';

interface Case {
  readonly label: string;
  readonly bytes: Uint8Array;
  readonly expected: Expected;
}

function frame(kind: FrameKind, payload: Uint8Array, ids: readonly [number, number, number]): Uint8Array {
  const bytes = new Uint8Array(frameSize(payload.length));
  encodeFrame(bytes, { kind, targetActorId: ids[0], requestId: ids[1], clientId: ids[2] }, payload);
  return bytes;
}

function reseal(bytes: Uint8Array): Uint8Array {
  const crc = crc32c(bytes, HEADER_BYTES, bytes.length, crc32c(bytes, 0, 20));
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(20, crc, true);
  return bytes;
}

const ids = fc.tuple(
  fc.nat({ max: 0xffff_ffff }),
  fc.nat({ max: 0xffff_ffff }),
  fc.nat({ max: 0xffff_ffff }),
);
// size 'max' on the byte arrays below: fast-check's default size stops at 10 bytes, so random
// datagrams were all shorter than a header (every one 'short') and payloads at most 10 bytes.
const payload = fc.uint8Array({ maxLength: 200, size: 'max' });
const validRequest = fc.tuple(payload, ids).map(([p, i]) => frame('request', p, i));

const caseArb: fc.Arbitrary<Case> = fc.oneof(
  // Random bytes: the decoder is the oracle (fast-check practically never builds a valid frame).
  fc.uint8Array({ maxLength: 120, size: 'max' }).map((bytes): Case => {
    const result = decodeFrame(bytes);
    const expected: Expected = result.ok
      ? result.frame.kind === 'request'
        ? 'accepted'
        : 'unexpected-kind'
      : result.reason;
    return { label: 'random', bytes, expected };
  }),
  fc.constant<Case>({ label: 'empty', bytes: new Uint8Array(0), expected: 'short' }),
  fc.tuple(validRequest, fc.nat({ max: HEADER_BYTES - 1 })).map(
    ([bytes, length]): Case => ({
      label: 'truncated header',
      bytes: bytes.slice(0, length),
      expected: 'short',
    }),
  ),
  fc
    .tuple(fc.tuple(fc.uint8Array({ minLength: 1, maxLength: 200, size: 'max' }), ids), fc.nat())
    .map(([[p, i], cut]): Case => {
      const bytes = frame('request', p, i);
      const length = HEADER_BYTES + (cut % p.length);
      return { label: 'truncated payload', bytes: bytes.slice(0, length), expected: 'short' };
    }),
  fc.tuple(validRequest, fc.uint8Array({ minLength: 1, maxLength: 40 })).map(([bytes, extra]): Case => {
    const longer = new Uint8Array(bytes.length + extra.length);
    longer.set(bytes);
    longer.set(extra, bytes.length);
    return { label: 'trailing bytes', bytes: longer, expected: 'bad-length' };
  }),
  fc
    .uint8Array({ minLength: DEFAULT_MAX_FRAME_BYTES + 1, maxLength: 3000 })
    .map((bytes): Case => ({ label: 'oversize', bytes, expected: 'too-large' })),
  fc.tuple(validRequest, fc.integer({ min: 0, max: 0xffff })).map(([bytes, magic]): Case => {
    const changed = magic === 0x1b1e ? 0x1b1f : magic;
    bytes[0] = changed & 0xff;
    bytes[1] = changed >>> 8;
    return { label: 'bad magic', bytes: reseal(bytes), expected: 'bad-magic' };
  }),
  fc.tuple(validRequest, fc.integer({ min: 2, max: 255 })).map(([bytes, version]): Case => {
    bytes[2] = version;
    return { label: 'bad version', bytes: reseal(bytes), expected: 'bad-version' };
  }),
  fc
    .tuple(
      validRequest,
      fc.integer({ min: 0, max: 255 }).filter((f) => ![0x01, 0x09, 0x02, 0x06, 0x10, 0x30].includes(f)),
    )
    .map(([bytes, flags]): Case => {
      bytes[3] = flags;
      return { label: 'unknown flags', bytes: reseal(bytes), expected: 'bad-flags' };
    }),
  fc.tuple(validRequest, fc.nat()).map(([bytes, pick]): Case => {
    // Any bit outside magic, version (bytes 0..2) and the length field (16..19): only the
    // checksum can notice those. Eligible bytes: 3..15, then 20..end.
    const eligibleBytes = 13 + (bytes.length - 20);
    const bit = pick % (eligibleBytes * 8);
    const nth = bit >> 3;
    const at = nth < 13 ? 3 + nth : 20 + (nth - 13);
    const flipped = bytes.slice();
    flipped[at]! ^= 1 << (bit & 7);
    return { label: 'bit flip', bytes: flipped, expected: 'bad-checksum' };
  }),
  fc.tuple(payload, ids, fc.constantFrom<FrameKind>('reply', 'error')).map(
    ([p, i, kind]): Case => ({
      label: 'reply sent to a server',
      bytes: frame(kind, p, i),
      expected: 'unexpected-kind',
    }),
  ),
);

async function waitFor(condition: () => boolean, timeoutMs: number, what: () => string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) assert.fail(`timed out waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

describe('fuzzing the echo server', () => {
  it('counts every bad datagram under its reason and answers every well-formed request', async () => {
    const server = await startEchoServer({ receiveBufferBytes: 1 << 22 });
    const fuzzer = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => fuzzer.bind(0, '127.0.0.1', resolve));
    const client = await IpipeClient.connect({
      host: '127.0.0.1',
      port: server.address.port,
      timeoutMs: 200,
      retries: 5,
    });

    // The well-formed client: 8 requests in flight at all times until told to stop.
    let stop = false;
    let answered = 0;
    let failures = 0;
    const worker = async (lane: number) => {
      for (let n = 0; !stop; n++) {
        const body = new Uint8Array([lane, n & 0xff, (n >> 8) & 0xff]);
        try {
          const reply = await client.request(1, body);
          assert.deepEqual([...reply], [...body]);
          answered++;
        } catch {
          failures++;
        }
      }
    };
    const workers = Array.from({ length: 8 }, (_, lane) => worker(lane));

    const zero = () => Object.fromEntries(DROP_REASONS.map((r) => [r, 0])) as Record<DropReason, number>;
    let expectedAccepted = 0;
    const seenLabels = new Set<string>();
    const randomOutcomes = new Set<Expected>();
    try {
      await fc.assert(
        fc.asyncProperty(fc.array(caseArb, { minLength: 1, maxLength: 20 }), async (cases) => {
          // Compare per burst (not cumulatively), so a shrunk counterexample is the real culprit.
          const before = server.drops.snapshot();
          const expected = zero();
          let expectedDrops = 0;
          for (const c of cases) {
            seenLabels.add(c.label);
            if (c.label === 'random') randomOutcomes.add(c.expected);
            if (c.expected === 'accepted') expectedAccepted++;
            else {
              expected[c.expected]++;
              expectedDrops++;
            }
            fuzzer.send(c.bytes, server.address.port, '127.0.0.1');
          }
          const target = server.drops.total + expectedDrops;
          // Wait for the server to have seen the burst, so counts are compared at a quiet point
          // and the kernel's receive buffer never holds more than one burst.
          await waitFor(
            () => server.drops.total >= target,
            5000,
            () => `server counted ${server.drops.total} drops, expected ${target}`,
          );
          const after = server.drops.snapshot();
          const delta = zero();
          for (const reason of DROP_REASONS) delta[reason] = after[reason] - before[reason];
          assert.deepEqual(delta, expected);
        }),
        { numRuns: 150, seed: 20_240_611 },
      );
    } catch (error) {
      stop = true;
      await Promise.all(workers);
      await client.close();
      await new Promise<void>((resolve) => fuzzer.close(() => resolve()));
      await server.close();
      throw error;
    }
    stop = true;
    await Promise.all(workers);

    // Every kind of mutation was exercised.
    for (const label of [
      'random',
      'empty',
      'truncated header',
      'truncated payload',
      'trailing bytes',
      'oversize',
      'bad magic',
      'bad version',
      'unknown flags',
      'bit flip',
      'reply sent to a server',
    ]) {
      assert.ok(seenLabels.has(label), `no "${label}" case was generated`);
    }
    // Random datagrams got past the length check to the header's fields.
    assert.ok(
      randomOutcomes.has('bad-magic'),
      `random datagrams only gave ${[...randomOutcomes].join(', ')}`,
    );
    // The server is alive and still answers; the client never lost a request.
    assert.deepEqual([...(await client.request(1, new Uint8Array([42])))], [42]);
    assert.ok(answered > 50, `only ${answered} well-formed requests were answered`);
    assert.equal(failures, 0);
    assert.equal(server.stats().replies, server.stats().requests);
    assert.ok(server.stats().requests >= answered + expectedAccepted);
    await client.close();
    await new Promise<void>((resolve) => fuzzer.close(() => resolve()));
    await server.close();
  });
});
