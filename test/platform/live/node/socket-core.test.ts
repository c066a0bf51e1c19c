/**
 * A live node whose NIC core 0 owns the UDP socket (`ingress: 'core'`, socket-core.ts): requests
 * answered by the core alone, the counters the controller reads from its shared block, host
 * actors' replies sent through the core from the node's port, the scheduler's own decisions
 * carried out across the two threads, stop, and what the mode refuses at start (the watchdog:
 * socket-core-watchdog.test.ts).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigError } from '../../../../src/errors.ts';
import { actorId } from '../../../../src/ids.ts';
import { createSharedChannelPair } from '../../../../src/platform/live/channel/channel.ts';
import { IpipeClient } from '../../../../src/platform/live/net/client.ts';
import { LiveNode, startNicDomain } from '../../../../src/platform/live/node/live-node.ts';
import { echo, ledger, staller } from './fixtures/actors.ts';

const MODULE = new URL('./fixtures/actors.ts', import.meta.url).pathname;
const entry = (id: number, name: string) => ({ id: actorId(id), name, module: MODULE, exportName: name });

test('ingress core: echo answered by core 0; stats read from its shared counters', async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    warmSpare: false, // the watchdog test below runs with it
    catalog: [entry(1, 'echo')],
    hostCores: 1,
    scheduler: { enableMigration: false },
  });
  assert.equal(node.ingress, 'core');
  assert.ok(node.address.port > 0, 'the port the core bound');
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: node.address.port, timeoutMs: 2_000 });
  const replies = echo.replies;
  assert.ok(replies);
  try {
    for (let i = 0; i < 50; i++) {
      const reply: { data: Uint8Array } = await client.call(1, echo.messages, replies, {
        type: 'echo',
        data: new Uint8Array([i, 255 - i]),
      });
      assert.deepEqual([...reply.data], [i, 255 - i]);
    }
    const stats = node.stats();
    assert.equal(stats.requests, 50);
    assert.equal(stats.replies, 50);
    assert.equal(stats.errorReplies, 0);
    assert.deepEqual(stats.executed['echo'], { nic: 50, host: 0 });
    assert.ok(stats.handlerNs.nic > 0 && stats.handlerNs.host === 0);
    assert.equal(node.nic.heldRequests(), 0);
    // An unknown actor: an error reply, and a drop under its reason.
    const missing = await client
      .call(9, echo.messages, replies, { type: 'echo', data: new Uint8Array(1) })
      .then(
        () => 'answered',
        (error: unknown) => (error as { remoteCode?: string }).remoteCode,
      );
    assert.equal(missing, 'IPIPE_ERR_ACTOR_UNKNOWN');
    assert.equal(node.stats().drops['unknown-actor'], 1);
    assert.equal(node.stats().errorReplies, 1);
    // Bytes the actor's codec refuses never reach its handler: a `decode` drop, not an execution
    // (as the controller path counts them).
    const refused = await client.request(1, new Uint8Array([0xff, 0xfe, 0xfd, 0xfc, 0xfb])).then(
      () => 'answered',
      (error: unknown) => (error as { remoteCode?: string }).remoteCode,
    );
    assert.equal(refused, 'IPIPE_ERR_CODEC_DECODE');
    assert.equal(node.stats().drops['decode'], 1);
    assert.deepEqual(node.stats().executed['echo'], { nic: 50, host: 0 });
  } finally {
    await client.close();
    await node.stop();
  }
});

test('ingress core: a host actor is answered through core 0, from the port the client talks to', async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    warmSpare: false, // the watchdog test below runs with it
    catalog: [entry(1, 'ledger'), entry(2, 'echo')],
    hostCores: 1,
    placement: { ledger: 'host' },
    scheduler: { enableMigration: false },
  });
  // The client's socket is connected to the node's port: a reply from any other port would be
  // discarded by its kernel, so an answer at all means the core sent it.
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: node.address.port, timeoutMs: 2_000 });
  const replies = ledger.replies;
  assert.ok(replies);
  try {
    let total = 0;
    for (let i = 1; i <= 20; i++) {
      total += i;
      const reply: { total: number; seq: number } = await client.call(1, ledger.messages, replies, {
        type: 'add',
        key: 3,
        amount: i,
        seq: i,
      });
      assert.equal(reply.seq, i);
      assert.equal(reply.total, total);
    }
    const stats = node.stats();
    assert.deepEqual(stats.executed['ledger'], { nic: 0, host: 20 });
    assert.equal(stats.replies, 20);
    assert.ok(stats.handlerNs.host > 0);
  } finally {
    await client.close();
    await node.stop();
  }
});

test("ingress core: the core's scheduler pushes a slow actor to the host; the controller carries it out", async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    warmSpare: false, // the watchdog test below runs with it
    catalog: [entry(1, 'staller')],
    hostCores: 1,
    // Thresholds far below a 2 ms handler: the first check after warm-up decides to push it.
    scheduler: {
      enableMigration: true,
      enableDowngrade: false,
      enableAutoscale: false,
      meanThreshNs: 100_000,
      tailThreshNs: 400_000,
      pushWarmupCompletions: 8,
      settleNs: 1_000_000,
    },
  });
  const decisions: string[] = [];
  node.nic.onDecision = (decision) => decisions.push(decision.kind);
  const client = await IpipeClient.connect({ host: '127.0.0.1', port: node.address.port, timeoutMs: 3_000 });
  const replies = staller.replies;
  assert.ok(replies);
  try {
    let id = 0;
    const deadline = performance.now() + 10_000;
    while (node.domainOf(actorId(1)) !== 'host') {
      assert.ok(performance.now() < deadline, 'the scheduler never pushed the staller to the host');
      const reply: { id: number } = await client.call(1, staller.messages, replies, {
        type: 'stall',
        id,
        ms: 2,
      });
      assert.equal(reply.id, id);
      id++;
    }
    // Still answered, now by the host, through the core.
    const after: { id: number } = await client.call(1, staller.messages, replies, {
      type: 'stall',
      id,
      ms: 1,
    });
    assert.equal(after.id, id);
    const stats = node.stats();
    assert.ok(decisions.includes('migrate'), `decisions seen: ${decisions.join(', ')}`);
    const migration = stats.migrations.find((m) => m.to === 'host');
    assert.ok(migration, 'a migration to the host was recorded');
    assert.notEqual(migration.trigger, 'forced');
    assert.ok((stats.executed['staller']?.host ?? 0) >= 1);
  } finally {
    await client.close();
    await node.stop();
  }
});

test('ingress core: stop refuses new requests, drains those in flight (answered through core 0), then closes', async () => {
  const node = await LiveNode.start({
    ingress: 'core',
    warmSpare: false,
    catalog: [entry(1, 'staller')],
    hostCores: 1,
    placement: { staller: 'host' },
    scheduler: { enableMigration: false },
  });
  const client = await IpipeClient.connect({
    host: '127.0.0.1',
    port: node.address.port,
    timeoutMs: 3_000,
    retries: 0,
  });
  const replies = staller.replies;
  assert.ok(replies);
  try {
    // Four 100 ms handlers on one host core: ~400 ms of work in flight when stop begins.
    const inFlight = [0, 1, 2, 3].map((id) =>
      client.call(1, staller.messages, replies, { type: 'stall', id, ms: 100 }),
    );
    // Not a fixed sleep (a loaded machine may be slower): stop once all four reached core 0 and the
    // refusal of new requests is in force once IN_STOPPING was posted (stop posts it at once).
    for (const deadline = performance.now() + 5_000; node.stats().requests < 4; ) {
      if (performance.now() > deadline) assert.fail('the four requests never reached core 0');
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    const stopped = node.stop();
    await new Promise((resolve) => setTimeout(resolve, 30));
    const late = await client.call(1, staller.messages, replies, { type: 'stall', id: 9, ms: 1 }).then(
      () => 'answered',
      (error: unknown) => (error as { remoteCode?: string }).remoteCode,
    );
    assert.equal(late, 'IPIPE_ERR_NODE_STOPPED', 'a request after stop began is refused');
    const answered = (await Promise.all(inFlight)) as { id: number }[];
    assert.deepEqual(
      answered.map((r) => r.id),
      [0, 1, 2, 3],
      'the requests in flight were drained and answered',
    );
    await stopped;
  } finally {
    await client.close();
    await node.stop();
  }
});

test('ingress core refuses at start what it does not support, saying what to do', async () => {
  const catalog = [entry(1, 'echo')];
  await assert.rejects(
    LiveNode.start({ ingress: 'core', catalog, nicCores: 2 }),
    (error: unknown) =>
      error instanceof ConfigError &&
      error.path === 'nicCores' &&
      /not supported with ingress 'core'/.test(error.message) &&
      /use 1 NIC core/.test(error.message),
  );
  await assert.rejects(
    LiveNode.start({ ingress: 'core', catalog, peers: { 1: { address: '127.0.0.1', port: 9 } } }),
    (error: unknown) => error instanceof ConfigError && error.path === 'peers',
  );
  await assert.rejects(
    LiveNode.start({ ingress: 'core', catalog: [...catalog, { ...entry(2, 'ledger'), node: 1 }] }),
    (error: unknown) => error instanceof ConfigError && error.path === 'peers',
  );
  const pair = createSharedChannelPair({ capacityBytes: 1 << 16 });
  await assert.rejects(
    startNicDomain({ ingress: 'core', catalog }, pair.nic),
    (error: unknown) =>
      error instanceof ConfigError && error.path === 'ingress' && /split node/.test(error.message),
  );
  await assert.rejects(
    LiveNode.start({ ingress: 'sideways' as 'core', catalog }),
    (error: unknown) => error instanceof ConfigError && error.path === 'ingress',
  );
});
