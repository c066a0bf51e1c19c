/**
 * The actor table: register / lookup / move / remove, unique ids and names, pinned placement kept,
 * unknown ids reported with the right code and a useful hint, the id allocator, and a model-based
 * property over random operation sequences.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  type ActorLocation,
  ActorTable,
  defineActor,
  field,
  messages,
  narrowRef,
  placementAllows,
} from '../../src/actor/index.ts';
import {
  ActorDefinitionError,
  ConfigError,
  DuplicateActorError,
  isIpipeError,
  UnknownActorError,
} from '../../src/errors.ts';
import { type ActorId, actorId, MAX_ACTOR_ID, nodeId } from '../../src/ids.ts';

const codec = messages({ ping: { n: field.u32() } });
const free = defineActor({ name: 'free', messages: codec, exec() {} });
const nicPinned = defineActor({ name: 'pinned-nic', messages: codec, placement: 'nic', exec() {} });
const hostPinned = defineActor({ name: 'pinned-host', messages: codec, placement: 'host', exec() {} });

const node0 = nodeId(0);
const nic: ActorLocation = { domain: 'nic', node: node0 };
const host: ActorLocation = { domain: 'host', node: node0 };
const remote: ActorLocation = { domain: 'remote', node: nodeId(2) };

function expectCode(action: () => unknown, code: Parameters<typeof isIpipeError>[1], pattern?: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(isIpipeError(error, code), `expected ${code}, got ${String(error)}`);
    if (pattern !== undefined) assert.match(error.message, pattern);
    return true;
  });
}

describe('actor table', () => {
  it('registers with allocated ids from 1, looks up by id and name, iterates in order', () => {
    const table = new ActorTable();
    const a = table.register({ definition: free, location: nic });
    const b = table.register({
      definition: free,
      name: 'free-2',
      location: host,
      endpoint: { address: '10.0.0.2', port: 9000 },
    });
    assert.equal(a.id, 1);
    assert.equal(b.id, 2);
    assert.equal(a.name, 'free');
    assert.equal(table.size, 2);
    assert.equal(table.lookup(a.id), a);
    assert.equal(table.require(b.id), b);
    assert.equal(table.idOf('free-2'), b.id);
    assert.equal(table.lookupName('free'), a);
    assert.equal(table.lookupName('nobody'), undefined);
    assert.deepStrictEqual(b.endpoint, { address: '10.0.0.2', port: 9000 });
    assert.equal(a.endpoint, undefined);
    assert.deepStrictEqual(
      [...table].map((e) => e.name),
      ['free', 'free-2'],
    );
    assert.ok(Object.isFrozen(a) && Object.isFrozen(a.location));
  });

  it('gives each entry a ref with its id, name and codecs, narrowable to the definition', () => {
    const table = new ActorTable();
    const entry = table.register({ definition: free, name: 'shard-3', location: nic });
    assert.equal(entry.ref.id, entry.id);
    assert.equal(entry.ref.name, 'shard-3');
    assert.equal(entry.ref.codec, codec);
    assert.ok(narrowRef(entry.ref, free) !== undefined);
    assert.ok(narrowRef(entry.ref, nicPinned) !== undefined, 'same codecs, same types');
    const other = defineActor({ name: 'other', messages: messages({ x: {} }), exec() {} });
    assert.equal(narrowRef(entry.ref, other), undefined);
  });

  it('refuses duplicate ids and names', () => {
    const table = new ActorTable();
    table.register({ definition: free, id: actorId(5), location: nic });
    expectCode(
      () => table.register({ definition: free, id: actorId(5), name: 'b', location: nic }),
      'IPIPE_ERR_ACTOR_DUPLICATE',
      /actor id 5 \(held by "free"\)/,
    );
    expectCode(
      () => table.register({ definition: free, location: nic }),
      'IPIPE_ERR_ACTOR_DUPLICATE',
      /actor name "free"/,
    );
    assert.equal(table.size, 1, 'refused registrations change nothing');
    assert.throws(() => table.register({ definition: free, location: nic }), DuplicateActorError);
  });

  it('reports unknown ids with UnknownActorError, saying whether the id was removed', () => {
    const table = new ActorTable();
    expectCode(() => table.require(actorId(3)), 'IPIPE_ERR_ACTOR_UNKNOWN', /table is empty/);
    const entry = table.register({ definition: free, location: nic });
    expectCode(
      () => table.require(actorId(3)),
      'IPIPE_ERR_ACTOR_UNKNOWN',
      /no actor has this id \(registered: 1\)/,
    );
    table.remove(entry.id);
    expectCode(() => table.require(entry.id), 'IPIPE_ERR_ACTOR_UNKNOWN', /removed/);
    expectCode(() => table.move(entry.id, host), 'IPIPE_ERR_ACTOR_UNKNOWN');
    expectCode(() => table.remove(entry.id), 'IPIPE_ERR_ACTOR_UNKNOWN');
    assert.throws(() => table.require(actorId(3)), UnknownActorError);
    assert.equal(table.lookup(entry.id), undefined);
  });

  it('moves an actor: a new frozen entry, the old one unchanged, the move counted', () => {
    const table = new ActorTable();
    const before = table.register({ definition: free, location: nic });
    const after = table.move(before.id, host);
    assert.deepStrictEqual(after.location, host);
    assert.equal(after.moves, 1);
    assert.deepStrictEqual(before.location, nic, 'a held entry is a snapshot');
    assert.equal(table.require(before.id), after);
    assert.equal(after.ref, before.ref);
    assert.equal(
      table.move(before.id, { domain: 'host', node: node0 }),
      after,
      'moving to where it is is a no-op',
    );
    assert.equal(table.move(before.id, remote).moves, 2);
  });

  it('keeps pinned actors in their domain, on register and on move; remote is always allowed', () => {
    const table = new ActorTable();
    expectCode(
      () => table.register({ definition: nicPinned, location: host }),
      'IPIPE_ERR_ACTOR_INVALID_DEFINITION',
      /pinned to the nic/,
    );
    expectCode(
      () => table.register({ definition: hostPinned, location: nic }),
      'IPIPE_ERR_ACTOR_INVALID_DEFINITION',
      /pinned to the host/,
    );
    const pinned = table.register({ definition: nicPinned, location: nic });
    assert.throws(() => table.move(pinned.id, host), ActorDefinitionError);
    assert.deepStrictEqual(table.require(pinned.id).location, nic);
    table.register({ definition: hostPinned, location: remote });
    assert.ok(
      placementAllows('any', nic) && placementAllows('host', remote) && !placementAllows('nic', host),
    );
  });

  it('removes an actor, freeing its name and letting its id be registered again', () => {
    const table = new ActorTable();
    const entry = table.register({ definition: free, location: nic });
    assert.equal(table.remove(entry.id), entry);
    assert.equal(table.size, 0);
    assert.equal(table.idOf('free'), undefined);
    const again = table.register({ definition: free, id: entry.id, location: host });
    assert.equal(table.require(entry.id), again);
  });

  it('refuses malformed registrations with the right class', () => {
    const table = new ActorTable();
    assert.throws(() => table.register({ definition: { ...free }, location: nic }), ActorDefinitionError);
    assert.throws(
      () => table.register({ definition: free, name: 'Bad Name', location: nic }),
      ActorDefinitionError,
    );
    assert.throws(
      () => table.register({ definition: free, location: { domain: 'gpu', node: node0 } as never }),
      ConfigError,
    );
    assert.throws(
      () => table.register({ definition: free, location: { domain: 'nic', node: -1 } as never }),
      ConfigError,
    );
    assert.throws(() => table.register({ definition: free, location: null as never }), ConfigError);
    assert.throws(() => table.register({ definition: free, id: -1 as ActorId, location: nic }), ConfigError);
    assert.throws(
      () => table.register({ definition: free, id: (MAX_ACTOR_ID + 1) as ActorId, location: nic }),
      ConfigError,
    );
    assert.throws(
      () => table.register({ definition: free, location: nic, endpoint: { address: '', port: 1 } }),
      ConfigError,
    );
    assert.throws(
      () => table.register({ definition: free, location: nic, endpoint: { address: 'h', port: 70_000 } }),
      ConfigError,
    );
    assert.equal(table.size, 0);
    assert.throws(() => new ActorTable({ firstId: -1 }), ConfigError);
  });

  it('sets and clears an endpoint', () => {
    const table = new ActorTable();
    const entry = table.register({ definition: free, location: nic });
    assert.deepStrictEqual(table.setEndpoint(entry.id, { address: '10.0.0.1', port: 7000 }).endpoint, {
      address: '10.0.0.1',
      port: 7000,
    });
    assert.equal(table.setEndpoint(entry.id, undefined).endpoint, undefined);
  });

  it('allocates ids that no actor holds, wraps after MAX_ACTOR_ID, and says when none is left', () => {
    const table = new ActorTable({ firstId: MAX_ACTOR_ID - 2 });
    table.register({ definition: free, name: 'a', id: actorId(MAX_ACTOR_ID - 1), location: nic });
    assert.equal(table.register({ definition: free, name: 'b', location: nic }).id, MAX_ACTOR_ID - 2);
    assert.equal(
      table.register({ definition: free, name: 'c', location: nic }).id,
      MAX_ACTOR_ID,
      'skips the held id',
    );
    expectCode(
      () => table.register({ definition: free, name: 'd', location: nic }),
      'IPIPE_ERR_ACTOR_IDS_EXHAUSTED',
      /no free actor id/,
    );
    table.remove(actorId(MAX_ACTOR_ID - 1));
    assert.equal(
      table.register({ definition: free, name: 'd', location: nic }).id,
      MAX_ACTOR_ID - 1,
      'wrapped around',
    );
  });

  it('agrees with a map model under random register / move / remove sequences', () => {
    const locations: ActorLocation[] = [nic, host, remote, { domain: 'nic', node: nodeId(1) }];
    type Op =
      | { kind: 'register'; name: number; id: number | undefined }
      | { kind: 'move'; pick: number; where: number }
      | { kind: 'remove'; pick: number };
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({
        kind: fc.constant('register' as const),
        name: fc.nat({ max: 12 }),
        id: fc.option(fc.integer({ min: 0, max: 15 }), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('move' as const), pick: fc.nat({ max: 20 }), where: fc.nat({ max: 3 }) }),
      fc.record({ kind: fc.constant('remove' as const), pick: fc.nat({ max: 20 }) }),
    );
    // size 'max': at fast-check's default size a run has at most 10 operations, about three
    // registrations; 1 run in 300 then held 5 actors at once, about 60 in 300 now do.
    const numRuns = 300;
    let crowdedRuns = 0;
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60, size: 'max' }), (ops) => {
        const table = new ActorTable();
        const model = new Map<number, { name: string; location: ActorLocation }>();
        let peakActors = 0;
        for (const step of ops) {
          if (step.kind === 'register') {
            const name = `actor-${step.name}`;
            const clash =
              [...model.values()].some((m) => m.name === name) ||
              (step.id !== undefined && model.has(step.id));
            const location = locations[step.name % locations.length]!;
            const attempt = () =>
              table.register({
                definition: free,
                name,
                location,
                ...(step.id === undefined ? {} : { id: actorId(step.id) }),
              });
            if (clash) {
              assert.throws(attempt, DuplicateActorError);
            } else {
              const entry = attempt();
              assert.ok(!model.has(entry.id), 'allocated ids are free');
              model.set(entry.id, { name, location });
            }
          } else {
            const ids = [...model.keys()];
            const id = ids.length === 0 ? 999 : ids[step.pick % ids.length]!;
            if (!model.has(id)) {
              assert.throws(
                () => (step.kind === 'move' ? table.move(actorId(id), nic) : table.remove(actorId(id))),
                UnknownActorError,
              );
            } else if (step.kind === 'move') {
              const location = locations[step.where]!;
              table.move(actorId(id), location);
              model.get(id)!.location = location;
            } else {
              table.remove(actorId(id));
              model.delete(id);
            }
          }
          assert.equal(table.size, model.size);
          for (const [id, expected] of model) {
            const entry = table.require(actorId(id));
            assert.equal(entry.name, expected.name);
            assert.deepStrictEqual(entry.location, expected.location);
            assert.equal(table.idOf(expected.name), id);
          }
          peakActors = Math.max(peakActors, model.size);
        }
        if (peakActors >= 5) crowdedRuns++;
      }),
      { numRuns },
    );
    assert.ok(crowdedRuns >= numRuns / 10, `only ${crowdedRuns} of ${numRuns} runs held 5 actors at once`);
  });
});
