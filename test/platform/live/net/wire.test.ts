/**
 * The wire protocol (src/platform/live/net/wire.ts): frames round-trip exactly; every truncation is
 * 'short'; every single-bit flip is refused; no input bytes make the decoder throw; oversize frames
 * are 'too-large'; each header check reports its own reason; error bodies round-trip and cut long
 * messages at a character boundary; drop counters count by reason.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { crc32c } from '../../../../src/dmo/crc32c.ts';
import { isIpipeError } from '../../../../src/errors.ts';
import {
  DEFAULT_MAX_FRAME_BYTES,
  DROP_REASONS,
  DropCounters,
  decodeErrorBody,
  decodeFrame,
  encodeErrorBody,
  encodeFrame,
  type FrameFields,
  FrameView,
  frameSize,
  HEADER_BYTES,
  markRetransmit,
  readFrameInto,
  sealFrame,
  turnIntoReply,
  WIRE_MAGIC,
  WIRE_VERSION,
} from '../../../../src/platform/live/net/wire.ts';

const u32 = fc.nat({ max: 0xffff_ffff });
const fieldsArb: fc.Arbitrary<FrameFields> = fc.record({
  kind: fc.constantFrom('request' as const, 'reply' as const, 'error' as const),
  retransmit: fc.boolean(),
  targetActorId: u32,
  requestId: u32,
  clientId: u32,
});
// size 'max' here and on the byte arrays below: fast-check's default size stops at 10 bytes
// whatever maxLength says, so payloads never came near the frame limit and random datagrams were
// shorter than a header.
const payloadArb = fc.uint8Array({ maxLength: DEFAULT_MAX_FRAME_BYTES - HEADER_BYTES, size: 'max' });

function encode(fields: FrameFields, payload: Uint8Array): Uint8Array {
  const bytes = new Uint8Array(frameSize(payload.length));
  assert.equal(encodeFrame(bytes, fields, payload), bytes.length);
  return bytes;
}

/** Rewrites the checksum so a deliberately altered header is otherwise valid. */
function reseal(bytes: Uint8Array): void {
  const length = bytes.length - HEADER_BYTES;
  const crc = crc32c(bytes, HEADER_BYTES, HEADER_BYTES + length, crc32c(bytes, 0, 20));
  new DataView(bytes.buffer, bytes.byteOffset).setUint32(20, crc, true);
}

describe('wire frames', () => {
  it('round-trip every header field and the payload exactly', () => {
    let longestPayload = 0;
    fc.assert(
      fc.property(fieldsArb, payloadArb, (fields, payload) => {
        longestPayload = Math.max(longestPayload, payload.length);
        const result = decodeFrame(encode(fields, payload));
        assert.ok(result.ok, `decode failed: ${result.ok ? '' : result.reason}`);
        const frame = result.frame;
        assert.equal(frame.kind, fields.kind);
        assert.equal(frame.retransmit, fields.kind === 'request' && fields.retransmit === true);
        assert.equal(frame.version, WIRE_VERSION);
        assert.equal(frame.targetActorId, fields.targetActorId);
        assert.equal(frame.requestId, fields.requestId);
        assert.equal(frame.clientId, fields.clientId);
        assert.deepEqual([...frame.payload], [...payload]);
      }),
    );
    assert.ok(longestPayload >= 1000, `the longest payload was ${longestPayload} bytes`);
  });

  it('lays the header out as documented (little-endian, 24 bytes)', () => {
    const bytes = encode(
      { kind: 'request', targetActorId: 0x01020304, requestId: 0x0a0b0c0d, clientId: 0xdeadbeef },
      new Uint8Array([7, 8, 9]),
    );
    const view = new DataView(bytes.buffer);
    assert.equal(HEADER_BYTES, 24);
    assert.equal(view.getUint16(0, true), WIRE_MAGIC);
    assert.equal(view.getUint8(2), WIRE_VERSION);
    assert.equal(view.getUint8(3), 0x01);
    assert.equal(view.getUint32(4, true), 0x01020304);
    assert.equal(view.getUint32(8, true), 0x0a0b0c0d);
    assert.equal(view.getUint32(12, true), 0xdeadbeef);
    assert.equal(view.getUint32(16, true), 3);
    assert.equal(view.getUint32(20, true), crc32c(bytes, 24, 27, crc32c(bytes, 0, 20)));
    assert.deepEqual([...bytes.subarray(24)], [7, 8, 9]);
  });

  it("reports every proper prefix of a frame as 'short'", () => {
    fc.assert(
      fc.property(fieldsArb, fc.uint8Array({ maxLength: 64 }), (fields, payload) => {
        const bytes = encode(fields, payload);
        for (let length = 0; length < bytes.length; length++) {
          const result = decodeFrame(bytes.subarray(0, length));
          assert.equal(result.ok ? 'ok' : result.reason, 'short', `prefix of ${length} bytes`);
        }
      }),
      { numRuns: 50 },
    );
  });

  it('refuses every single-bit flip anywhere in the frame', () => {
    let longestPayload = 0;
    fc.assert(
      fc.property(fieldsArb, fc.uint8Array({ maxLength: 200, size: 'max' }), (fields, payload) => {
        longestPayload = Math.max(longestPayload, payload.length);
        const bytes = encode(fields, payload);
        for (let bit = 0; bit < bytes.length * 8; bit++) {
          const damaged = bytes.slice();
          damaged[bit >> 3]! ^= 1 << (bit & 7);
          const result = decodeFrame(damaged);
          assert.equal(result.ok, false, `flip of bit ${bit} went unnoticed`);
          // Flips in the payload, ids, flags and checksum can only be caught by the CRC.
          const byte = bit >> 3;
          if (byte >= 3 && byte !== 16 && byte !== 17 && byte !== 18 && byte !== 19 && !result.ok) {
            assert.equal(result.reason, 'bad-checksum', `flip of bit ${bit}`);
          }
        }
      }),
      { numRuns: 30 },
    );
    assert.ok(longestPayload >= 100, `the longest payload was ${longestPayload} bytes`);
  });

  it('never throws on arbitrary bytes, and accepts only what re-encodes to the same bytes', () => {
    const reasons = new Set<string>();
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000, size: 'max' }), (bytes) => {
        const result = decodeFrame(bytes);
        reasons.add(result.ok ? 'ok' : result.reason);
        if (result.ok) {
          const { frame } = result;
          assert.deepEqual([...encode(frame, frame.payload)], [...bytes]);
        } else {
          assert.ok((DROP_REASONS as readonly string[]).includes(result.reason));
        }
      }),
      { numRuns: 2000 },
    );
    // Past the length checks: random datagrams both within and over the frame limit.
    for (const reason of ['bad-magic', 'too-large'])
      assert.ok(reasons.has(reason), `no '${reason}' among ${[...reasons]}`);
  });

  it('never throws on arbitrary header fields behind a valid magic and version', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 24, maxLength: 120, size: 'max' }),
        fc.boolean(),
        (bytes, sealIt) => {
          bytes[0] = WIRE_MAGIC & 0xff;
          bytes[1] = WIRE_MAGIC >>> 8;
          bytes[2] = WIRE_VERSION;
          if (sealIt) {
            new DataView(bytes.buffer).setUint32(16, bytes.length - HEADER_BYTES, true);
            reseal(bytes);
          }
          const result = decodeFrame(bytes);
          if (!result.ok) assert.ok((DROP_REASONS as readonly string[]).includes(result.reason));
        },
      ),
      { numRuns: 1000 },
    );
  });

  it("reports datagrams over the frame limit as 'too-large', and refuses to encode them", () => {
    const fields: FrameFields = { kind: 'request', targetActorId: 1, requestId: 2, clientId: 3 };
    const fits = new Uint8Array(DEFAULT_MAX_FRAME_BYTES);
    encodeFrame(fits, fields, new Uint8Array(DEFAULT_MAX_FRAME_BYTES - HEADER_BYTES));
    assert.ok(decodeFrame(fits).ok);
    // The same frame with one trailing byte is over the limit before it is anything else.
    const over = new Uint8Array(DEFAULT_MAX_FRAME_BYTES + 1);
    over.set(fits);
    assert.deepEqual(decodeFrame(over), { ok: false, reason: 'too-large' });
    // A smaller limit refuses what the default accepts.
    assert.deepEqual(decodeFrame(fits, 512), { ok: false, reason: 'too-large' });
    // A header declaring more payload than any frame may hold.
    const declared = encode(fields, new Uint8Array(4));
    new DataView(declared.buffer).setUint32(16, 100_000, true);
    assert.deepEqual(decodeFrame(declared), { ok: false, reason: 'too-large' });
    assert.throws(
      () =>
        encodeFrame(new Uint8Array(4000), fields, new Uint8Array(DEFAULT_MAX_FRAME_BYTES - HEADER_BYTES + 1)),
      (error: unknown) =>
        isIpipeError(error, 'IPIPE_ERR_CODEC_ENCODE') && /1472-byte frame limit/.test(String(error)),
    );
  });

  it('names each header problem by its own reason', () => {
    const good = encode(
      { kind: 'request', targetActorId: 5, requestId: 6, clientId: 7 },
      new Uint8Array([1, 2]),
    );
    const variant = (change: (bytes: Uint8Array) => void, resealIt: boolean) => {
      const bytes = good.slice();
      change(bytes);
      if (resealIt) reseal(bytes);
      return decodeFrame(bytes);
    };
    assert.deepEqual(
      variant((b) => (b[0] = 0x00), true),
      { ok: false, reason: 'bad-magic' },
    );
    assert.deepEqual(
      variant((b) => (b[2] = 2), true),
      { ok: false, reason: 'bad-version' },
    );
    for (const flags of [0x00, 0x03, 0x04, 0x05, 0x0a, 0x0e, 0x11, 0x20, 0x81, 0xff]) {
      assert.deepEqual(
        variant((b) => (b[3] = flags), true),
        { ok: false, reason: 'bad-flags' },
        `flags ${flags}`,
      );
    }
    assert.deepEqual(
      variant((b) => (b[3] = 0x10), false),
      { ok: false, reason: 'bad-checksum' },
    );
    const trailing = new Uint8Array(good.length + 3);
    trailing.set(good);
    assert.deepEqual(decodeFrame(trailing), { ok: false, reason: 'bad-length' });
  });

  it('seals a payload encoded in place, marks retransmits, and turns a request into its reply', () => {
    const buffer = new Uint8Array(DEFAULT_MAX_FRAME_BYTES);
    buffer.set([9, 8, 7, 6], HEADER_BYTES);
    const size = sealFrame(buffer, { kind: 'request', targetActorId: 3, requestId: 4, clientId: 5 }, 4);
    const view = new FrameView();
    assert.equal(readFrameInto(buffer.subarray(0, size), view), undefined);
    assert.equal(view.retransmit, false);
    markRetransmit(buffer, size);
    assert.equal(readFrameInto(buffer.subarray(0, size), view), undefined);
    assert.equal(view.kind, 'request');
    assert.equal(view.retransmit, true);
    assert.equal(turnIntoReply(buffer, 'reply', 4), size);
    const reply = decodeFrame(buffer.subarray(0, size));
    assert.ok(reply.ok);
    assert.equal(reply.frame.kind, 'reply');
    assert.equal(reply.frame.requestId, 4);
    assert.equal(reply.frame.clientId, 5);
    assert.deepEqual([...reply.frame.payload], [9, 8, 7, 6]);
  });
});

describe('error bodies', () => {
  it('round-trip a code and message', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[A-Z_]{1,60}$/), fc.string({ maxLength: 200 }), (code, message) => {
        const bytes = new Uint8Array(2000);
        const written = encodeErrorBody(bytes, 10, code, message);
        const body = decodeErrorBody(bytes, 10, written);
        assert.ok(body.ok);
        assert.equal(body.code, code);
        // Lone surrogates become U+FFFD in UTF-8; everything else survives exactly.
        assert.equal(body.message, new TextDecoder().decode(new TextEncoder().encode(message)));
      }),
    );
  });

  it('cut a long message at a character boundary to fit', () => {
    const bytes = new Uint8Array(64);
    const written = encodeErrorBody(bytes, 0, 'IPIPE_ERR_X', 'é'.repeat(100), 40);
    assert.ok(written <= 40);
    const body = decodeErrorBody(bytes, 0, written);
    assert.ok(body.ok);
    assert.match(body.message, /^é+$/);
    assert.equal(body.message.length, Math.floor((40 - 1 - 11 - 2) / 2));
  });

  it('refuse codes that are empty or not printable ASCII, and report malformed bodies without throwing', () => {
    const bytes = new Uint8Array(64);
    assert.throws(() => encodeErrorBody(bytes, 0, '', 'x'), /error code/);
    assert.throws(() => encodeErrorBody(bytes, 0, 'BAD CODE', 'x'), /error code/);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 80 }), (random) => {
        const body = decodeErrorBody(random);
        if (!body.ok) assert.equal(typeof body.problem, 'string');
      }),
    );
  });
});

describe('DropCounters', () => {
  it('counts by reason and in total, and resets', () => {
    const drops = new DropCounters();
    drops.add('short');
    drops.add('short');
    drops.add('bad-checksum', 5);
    assert.equal(drops.get('short'), 2);
    assert.equal(drops.get('bad-checksum'), 5);
    assert.equal(drops.get('bad-magic'), 0);
    assert.equal(drops.total, 7);
    const snapshot = drops.snapshot();
    assert.deepEqual(Object.keys(snapshot).sort(), [...DROP_REASONS].sort());
    assert.equal(snapshot['short'], 2);
    drops.reset();
    assert.equal(drops.total, 0);
  });
});
