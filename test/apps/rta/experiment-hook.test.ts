/**
 * The experiment hook (src/apps/rta/experiment-hook.ts): what `ipipe experiment rta` builds on.
 * RTA registered on a SimNode at each of the paper's packet sizes, configured, driven open-loop
 * from the seeded stream, finished, and read back — and the results equal the reference.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RtaConfigError } from '../../../src/apps/rta/errors.ts';
import {
  compareWithReference,
  RTA_PACKET_SIZES,
  type RtaReportedWindow,
  type RtaTuple,
  registerRtaOnSimNode,
} from '../../../src/apps/rta/index.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { liquidioTiming } from './harness.ts';

const SEED = 17;

function freshNode(enableMigration = true): SimNode {
  return new SimNode({
    timing: liquidioTiming(),
    kernel: new EventKernel(),
    maxActors: 64,
    scheduler: { enableMigration },
  });
}

test('at every packet size: configure, an open-loop stream, finish, and results equal the reference', (t) => {
  t.diagnostic(`seed ${SEED}`);
  const tuplesPerRequest: number[] = [];
  for (const packetBytes of RTA_PACKET_SIZES) {
    const node = freshNode();
    const rta = registerRtaOnSimNode(node, {
      packetBytes,
      seed: SEED,
      config: { window: { windowMs: 2_000, slideMs: 500, latenessMs: 0, tickMs: 1 } },
    });
    assert.equal(rta.actorIds.size, rta.workload.actors.length);
    rta.configureNow();
    // 300 requests, one every 20 µs, from the endless stream; keep their tuples for the reference.
    const stream = rta.stream();
    const sent: RtaTuple[] = [];
    let answered = 0;
    for (let i = 0; i < 300; i++) {
      const request = stream.next();
      assert.ok(request.packetBytes >= packetBytes);
      if (request.message.type === 'ingest') sent.push(...request.message.tuples);
      rta.send(request, (_id, _latencyNs, ok) => ok && answered++, { atNs: node.kernel.now() + i * 20_000 });
    }
    tuplesPerRequest.push(stream.tuplesSent / 300);
    let finished: string | undefined | null = null;
    rta.finish((failure) => {
      finished = failure;
    });
    let windows: RtaReportedWindow[] = [];
    node.kernel.run({});
    assert.equal(finished, undefined, 'every filter took its end-of-stream advance');
    rta.readResults((read) => {
      windows = read;
    });
    node.kernel.run({});
    assert.equal(answered, 300);
    const reference = rta.workload.reference(sent);
    assert.ok(reference.length > 2, `${packetBytes} B: several windows`);
    assert.deepEqual(compareWithReference(windows, reference), [], `${packetBytes} B`);
  }
  t.diagnostic(`tuples per request at ${RTA_PACKET_SIZES.join('/')} B: ${tuplesPerRequest.join(', ')}`);
  assert.equal(tuplesPerRequest[0], 1, 'one tuple per 64-byte packet');
  for (let i = 1; i < tuplesPerRequest.length; i++) {
    assert.ok(tuplesPerRequest[i]! > tuplesPerRequest[i - 1]!, 'tuples per request grow with packet size');
  }
});

test('the host-only baseline places every actor on the host; unknown instances are refused', () => {
  const node = freshNode(false);
  const rta = registerRtaOnSimNode(node, { packetBytes: 256, seed: SEED, domain: 'host' });
  for (const id of rta.actorIds.values()) assert.equal(node.domainOf(id), 'host');
  rta.configureNow();
  assert.throws(() => rta.ref('rta-filter-9'), RtaConfigError);
  const mixed = registerRtaOnSimNode(freshNode(), { seed: SEED, domain: { ranker: 'host' } });
  for (const [name, id] of mixed.actorIds) {
    assert.equal(mixed.node.domainOf(id), name.startsWith('rta-ranker') ? 'host' : 'nic', name);
  }
});

test('compareWithReference names what differs', () => {
  const reference = [
    {
      windowEndMs: 1_000,
      totalCount: 3,
      distinctKeys: 2,
      counts: new Map([
        ['#a', 2],
        ['#b', 1],
      ]),
      top: [
        { key: '#a', count: 2 },
        { key: '#b', count: 1 },
      ],
    },
  ];
  assert.deepEqual(
    compareWithReference(
      [
        {
          windowEndMs: 1_000,
          totalCount: 3,
          distinctKeys: 2,
          entries: [
            { key: '#a', count: 2 },
            { key: '#b', count: 1 },
          ],
        },
      ],
      reference,
    ),
    [],
  );
  const problems = compareWithReference(
    [
      { windowEndMs: 1_000, totalCount: 3, distinctKeys: 2, entries: [{ key: '#b', count: 2 }] },
      { windowEndMs: 2_000, totalCount: 1, distinctKeys: 1, entries: [] },
    ],
    reference,
  );
  assert.equal(problems.length, 2);
  assert.match(problems[0]!, /top \[#b:2\], expected \[#a:2 #b:1\]/);
  assert.match(problems[1]!, /2000 ms: reported but not expected/);
});
