/**
 * Origins: a send inherits the current origin by default (so a downstream actor can answer the
 * client, as RKV's memtable does), `self` makes the sender the one waiting and restores its own
 * origin when the reply arrives, `none` cuts the chain. Also refOf / narrowRef.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type ClientOrigin,
  defineActor,
  field,
  messages,
  NO_ORIGIN,
  narrowRef,
  type Origin,
  originForSend,
  originOfReply,
  refOf,
  type SendOriginMode,
} from '../../src/actor/index.ts';
import { ActorDefinitionError, UnknownActorError } from '../../src/errors.ts';
import { type ActorId, actorId } from '../../src/ids.ts';

const client: ClientOrigin = {
  kind: 'client',
  endpoint: { address: '10.0.0.9', port: 40_000 },
  requestId: 7,
};
const consensus = actorId(1);
const memtable = actorId(2);

describe('origin propagation', () => {
  it('inherit passes the same origin object along, without allocating', () => {
    assert.equal(originForSend(client, 'inherit', consensus, 0), client);
    assert.equal(originForSend(NO_ORIGIN, 'inherit', consensus, 0), NO_ORIGIN);
  });

  it('RKV: client → consensus → memtable, and the memtable answers the client', () => {
    // consensus handles the client's write and, at commit, sends to the memtable (default inherit).
    const atMemtable = originForSend(client, 'inherit', consensus, 0);
    assert.equal(atMemtable.kind, 'client');
    assert.deepStrictEqual(atMemtable, client);
  });

  it('self makes the sender wait, and its handler sees its own origin again when the reply comes', () => {
    const request = originForSend(client, 'self', consensus, 41);
    assert.deepStrictEqual(request, { kind: 'actor', actor: consensus, requestId: 41, parent: client });
    assert.ok(Object.isFrozen(request));
    assert.ok(request.kind === 'actor');
    // The memtable replies; the consensus actor handles the answer under the client's origin.
    assert.equal(originOfReply(request), client);
  });

  it('none cuts the chain: the receiver cannot reply', () => {
    assert.equal(originForSend(client, 'none', consensus, 0).kind, 'none');
  });

  it('nested requests unwind in order (property)', () => {
    const mode = fc.constantFrom<SendOriginMode>('inherit', 'self', 'none');
    fc.assert(
      fc.property(fc.array(fc.tuple(mode, fc.nat({ max: 20 })), { maxLength: 20 }), (hops) => {
        // Walk a chain of sends; each `self` pushes the origin it had, each reply must pop it.
        let origin: Origin = client;
        const waiting: Origin[] = [];
        for (const [hopMode, sender] of hops) {
          const next = originForSend(origin, hopMode, actorId(sender), waiting.length);
          if (hopMode === 'self') waiting.push(origin);
          if (hopMode === 'none') waiting.length = 0;
          origin = next;
        }
        while (origin.kind === 'actor') {
          const expected = waiting.pop();
          origin = originOfReply(origin);
          assert.equal(origin, expected);
        }
        assert.equal(waiting.length, 0);
      }),
    );
  });
});

describe('refs', () => {
  const codec = messages({ get: { key: field.string() } });
  const replies = messages({ value: { bytes: field.bytes() } });
  const reader = defineActor({ name: 'reader', messages: codec, replies, exec() {} });

  it('refOf carries the id, the instance name and both codecs, frozen', () => {
    const ref = refOf(reader, memtable);
    assert.deepStrictEqual({ ...ref }, { id: memtable, name: 'reader', codec, replies });
    assert.ok(Object.isFrozen(ref));
    assert.equal(refOf(reader, memtable, 'reader-2').name, 'reader-2');
  });

  it('refOf refuses invalid ids, names and definitions', () => {
    assert.throws(() => refOf(reader, -1 as ActorId), UnknownActorError);
    assert.throws(() => refOf(reader, memtable, 'Reader'), ActorDefinitionError);
    assert.throws(() => refOf({ ...reader }, memtable), ActorDefinitionError);
  });

  it('narrowRef accepts refs with the same codecs and refuses others', () => {
    const ref = refOf(reader, memtable);
    assert.equal(narrowRef(ref, reader), ref);
    assert.equal(narrowRef(undefined, reader), undefined);
    const sameMessagesOtherReplies = defineActor({ name: 'writer', messages: codec, exec() {} });
    assert.equal(narrowRef(ref, sameMessagesOtherReplies), undefined);
  });
});
