/**
 * The live NIC's client directory stays bounded (idle entries swept, a full table makes room)
 * while the clients in use stay known: their endpoint, the id an endpoint talks as, and the peer
 * to relay another node's client's answers through.
 */

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ConfigError } from '../../../../src/errors.ts';
import { ClientDirectory, endpointKey } from '../../../../src/platform/live/node/client-directory.ts';

const PEER = { address: '10.0.0.2', port: 7000 };

describe('ClientDirectory', () => {
  it('keeps one record per client and endpoint, and a new one when the client moves', () => {
    const directory = new ClientDirectory({ limit: 16, idleMs: 1000 });
    const first = directory.ownClient(5, '127.0.0.1', 4000, 0);
    assert.equal(directory.ownClient(5, '127.0.0.1', 4000, 1), first, 'same endpoint: same record');
    assert.equal(first.key, '127.0.0.1:4000');
    assert.equal(directory.clientIdAt(first.key), 5);
    const moved = directory.ownClient(5, '127.0.0.1', 4001, 2);
    assert.notEqual(moved, first);
    assert.deepEqual(directory.endpointOf(5), { address: '127.0.0.1', port: 4001 });
    // A client restarted on the old port talks as a new id there.
    directory.ownClient(6, '127.0.0.1', 4000, 3);
    assert.equal(directory.clientIdAt('127.0.0.1:4000'), 6);
    assert.equal(directory.clientIdAt('127.0.0.1:9999'), 0, 'unknown endpoint: id 0');
  });

  it("relays another node's client through its peer, and never a client that talks to this node", () => {
    const directory = new ClientDirectory({ limit: 16, idleMs: 1000 });
    const remoteClient = { address: '10.0.0.9', port: 5000 };
    directory.noteRelayed(remoteClient, 77, PEER, 0);
    assert.deepEqual(directory.relayFor(endpointKey(remoteClient)), PEER);
    assert.equal(directory.clientIdAt(endpointKey(remoteClient)), 77);
    const own = directory.ownClient(8, '127.0.0.1', 4000, 0);
    directory.noteRelayed(own.endpoint, 8, PEER, 1);
    assert.equal(directory.relayFor(own.key), undefined);
    // The remote client now talks to this node directly: answered directly from then on.
    directory.ownClient(77, remoteClient.address, remoteClient.port, 2);
    assert.equal(directory.relayFor(endpointKey(remoteClient)), undefined);
  });

  it('forgets entries idle for idleMs at a sweep, keeps the ones in use', () => {
    const directory = new ClientDirectory({ limit: 1000, idleMs: 1000 });
    for (let id = 1; id <= 10; id++) directory.ownClient(id, '127.0.0.1', 4000 + id, 0);
    directory.noteRelayed({ address: '10.0.0.9', port: 5000 }, 99, PEER, 0);
    directory.ownClient(3, '127.0.0.1', 4003, 900);
    assert.equal(directory.sweep(950), 0, 'nothing is idle yet');
    // Sweeps run at most every idleMs / 4: at 1100 the entries seen at 0 are idle, but it is too soon.
    assert.equal(directory.sweep(1100), 0, 'too soon after the last sweep');
    assert.equal(directory.clientCount, 10);
    const gone = directory.sweep(1600);
    assert.equal(gone, 9 * 2 + 1, 'nine idle clients with their endpoints, one relayed endpoint');
    assert.equal(directory.clientCount, 1);
    assert.equal(directory.endpointCount, 1);
    assert.deepEqual(directory.endpointOf(3), { address: '127.0.0.1', port: 4003 });
    assert.equal(directory.endpointOf(4), undefined);
    assert.equal(directory.evicted, gone);
  });

  it('never holds more than its limit, and always knows the client it just saw', () => {
    // Runs that filled a limit above 10: at fast-check's default size (10 operations at most) no
    // such limit could be reached, and with steps of up to 400 ms against a 1 s idle time the
    // sweep keeps only a handful of clients anyway. Half the runs therefore step 100 times more
    // slowly through time (0–4 ms), so that the limit, not idleness, is what evicts.
    let filledLargeLimit = 0;
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.array(
          fc.record({
            relayed: fc.boolean(),
            id: fc.integer({ min: 1, max: 200 }),
            port: fc.integer({ min: 1, max: 60 }),
            stepMs: fc.integer({ min: 0, max: 400 }),
          }),
          { maxLength: 300, size: 'max' },
        ),
        fc.boolean(),
        (limit, operations, busy) => {
          const directory = new ClientDirectory({ limit, idleMs: 1000 });
          let nowMs = 0;
          let filled = false;
          for (const op of operations) {
            nowMs += busy ? Math.floor(op.stepMs / 100) : op.stepMs;
            const endpoint = { address: '127.0.0.1', port: 1000 + op.port };
            if (op.relayed) {
              directory.noteRelayed(endpoint, op.id, PEER, nowMs);
              const key = endpointKey(endpoint);
              // Unless it is one of this node's own clients, it relays through the peer just noted.
              const via = directory.relayFor(key);
              if (via !== undefined) assert.deepEqual(via, PEER);
            } else {
              const client = directory.ownClient(op.id, endpoint.address, endpoint.port, nowMs);
              assert.deepEqual(directory.endpointOf(op.id), endpoint);
              assert.equal(directory.clientIdAt(client.key), op.id);
              assert.equal(directory.relayFor(client.key), undefined);
            }
            directory.sweep(nowMs);
            assert.ok(directory.clientCount <= limit, `${directory.clientCount} clients > ${limit}`);
            assert.ok(directory.endpointCount <= limit, `${directory.endpointCount} endpoints > ${limit}`);
            if (directory.clientCount === limit || directory.endpointCount === limit) filled = true;
          }
          if (filled && limit > 10) filledLargeLimit++;
        },
      ),
      { seed: 20261122, numRuns: 200 },
    );
    assert.ok(filledLargeLimit >= 20, `only ${filledLargeLimit} of 200 runs filled a limit above 10`);
  });

  it('makes room for new clients when every entry is recent', () => {
    const directory = new ClientDirectory({ limit: 64, idleMs: 60_000 });
    for (let id = 1; id <= 1000; id++) directory.ownClient(id, '127.0.0.1', id, id);
    assert.ok(directory.clientCount <= 64);
    assert.ok(directory.endpointCount <= 64);
    assert.deepEqual(directory.endpointOf(1000), { address: '127.0.0.1', port: 1000 });
    assert.equal(directory.endpointOf(1), undefined, 'the oldest went first');
    assert.ok(directory.evicted >= 2 * (1000 - 64));
  });

  it('refuses a limit or idle time that cannot work', () => {
    assert.throws(() => new ClientDirectory({ limit: 0, idleMs: 1000 }), ConfigError);
    assert.throws(() => new ClientDirectory({ limit: 1.5, idleMs: 1000 }), ConfigError);
    assert.throws(() => new ClientDirectory({ limit: 10, idleMs: 0 }), ConfigError);
    assert.throws(() => new ClientDirectory({ limit: 10, idleMs: Number.NaN }), ConfigError);
  });
});
