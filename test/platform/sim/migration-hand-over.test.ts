/**
 * Phase 4 of a migration to the host (Clean, iPipe §4.4): the requests buffered while the actor
 * moved are handed over one send at a time. The PCIe channel is a FIFO in the order requests are
 * handed to it, so the hand-over must not reserve it ahead for its whole backlog: other actors'
 * packets forwarded meanwhile interleave with it, and the migrated actor's own new requests queue
 * behind its buffered ones (its order is kept).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { defineActor, field, messages } from '../../../src/actor/index.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { ledger } from './ledger-actor.ts';
import { testTiming } from './test-timing.ts';

const hostEcho = defineActor({
  name: 'host-echo',
  messages: messages({ ping: { seq: field.u32() } }),
  replies: messages({ pong: { seq: field.u32() } }),
  placement: 'host',
  exec(ctx, message) {
    ctx.reply({ type: 'pong', seq: message.seq });
  },
  cost: () => ({ instructions: 0, fixedNs: 0 }),
});

test('a long hand-over leaves other traffic alone and keeps the migrated actor in order', () => {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming(),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const books = node.register(ledger);
  const echo = node.register(hostEcho);
  const seqsSeen: number[] = [];
  let seq = 0;
  const add = (atNs: number) => {
    const mine = ++seq;
    node.clientSend(
      books,
      { type: 'add', key: 1, amount: 1, seq: mine },
      (_id, _latencyNs, ok, reply) => {
        assert.ok(ok, `add ${mine} refused`);
        seqsSeen.push((reply as { seq: number }).seq);
      },
      undefined,
      { atNs },
    );
  };
  // 300 adds, one per 400 ns: the NIC cores (1 µs to receive each) keep up and put them in the
  // ledger's mailbox, but the ledger is exclusive at 3.1 µs each, so ~260 still wait there when it
  // is moved — the buffer the hand-over sends at 300 ns each (~80 µs), with the NIC cores idle.
  for (let i = 0; i < 300; i++) add(i * 400);
  const migrateAtNs = 125_000;
  kernel.at(migrateAtNs, () => node.migrate(books.id, 'host'));
  // During the hand-over: pings for another (host) actor, and more adds for the moved one.
  const pingLatenciesNs: number[] = [];
  const pingSentNs: number[] = [];
  for (let atNs = migrateAtNs + 10_000; atNs < migrateAtNs + 60_000; atNs += 2_000) {
    kernel.at(atNs, () => {
      pingSentNs.push(atNs);
      node.clientSend(echo, { type: 'ping', seq: atNs }, (_id, latencyNs, ok) => {
        assert.ok(ok);
        pingLatenciesNs.push(latencyNs);
      });
      add(atNs);
    });
  }
  kernel.run({});

  assert.equal(node.migrations.length, 1);
  const migration = node.migrations[0]!;
  const cleanFromNs = migration.endedAtNs - migration.phasesNs.clean;
  assert.ok(migration.bufferedRequests >= 250, `${migration.bufferedRequests} requests were buffered`);
  assert.ok(
    pingSentNs.every((atNs) => atNs > cleanFromNs && atNs < migration.endedAtNs),
    `the pings were sent during the hand-over (${cleanFromNs}–${migration.endedAtNs} ns)`,
  );
  // A ping's own path: wire 1 µs, NIC forward 1 µs, PCIe 1 µs each way, host, egress 1 µs, wire
  // 1 µs (~6 µs). Queued behind the whole hand-over it waited up to its length (~80 µs).
  const worstPingNs = Math.max(...pingLatenciesNs);
  assert.equal(pingLatenciesNs.length, pingSentNs.length);
  assert.ok(worstPingNs < 10_000, `pings did not wait for the hand-over (worst ${worstPingNs} ns)`);
  // Every add answered once, in the order sent (those sent during the hand-over too).
  assert.equal(seqsSeen.length, seq);
  assert.deepEqual(
    seqsSeen,
    seqsSeen.toSorted((a, b) => a - b),
    'the moved actor served its requests in order',
  );
  assert.equal(node.outstandingClients(), 0);
});

test('moving the actor back while it still hands over loses nothing and keeps its order', () => {
  const kernel = new EventKernel();
  const node = new SimNode({
    timing: testTiming(),
    kernel,
    scheduler: { enableMigration: false, enableDowngrade: false, enableAutoscale: false },
  });
  const books = node.register(ledger);
  const seqsSeen: number[] = [];
  const sent = 300;
  for (let seq = 1; seq <= sent; seq++) {
    node.clientSend(
      books,
      { type: 'add', key: 1, amount: 1, seq },
      (_id, _latencyNs, ok, reply) => {
        assert.ok(ok, `add ${seq} refused`);
        seqsSeen.push((reply as { seq: number }).seq);
      },
      undefined,
      { atNs: seq * 400 },
    );
  }
  kernel.at(125_000, () => node.migrate(books.id, 'host'));
  // The hand-over of ~260 requests takes ~80 µs; 20 µs into it, the actor is moved back.
  const backAtNs = 150_000;
  kernel.at(backAtNs, () => {
    const [first] = node.migrations;
    assert.equal(first, undefined, 'the first migration is still in its Clean phase');
    node.migrate(books.id, 'nic');
  });
  kernel.run({});

  assert.deepEqual(
    node.migrations.map((m) => `${m.from}→${m.to}`),
    ['nic→host', 'host→nic'],
  );
  assert.equal(node.domainOf(books.id), 'nic');
  assert.equal(seqsSeen.length, sent, 'every add answered once');
  assert.deepEqual(
    seqsSeen,
    seqsSeen.toSorted((a, b) => a - b),
    'in the order sent',
  );
  let total = -1;
  node.clientSend(books, { type: 'get', key: 1 }, (_id, _l, _ok, reply) => {
    total = (reply as { total: number }).total;
  });
  kernel.run({});
  assert.equal(total, sent, 'every add counted once');
});
