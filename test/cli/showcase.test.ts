/**
 * `npm start` (ipipe showcase): every part runs and holds its promise — the simulated
 * walkthrough answers every request, the live node answers every request exactly once while
 * actors migrate, with each migration's phases reported, and RKV's actors on live nodes (consensus
 * and memtable on NIC cores) elect a new leader after the leader's node is killed, the node comes
 * back from its files, and the client history is still linearizable.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { RkvLiveShowcaseResult } from '../../src/experiments/rkv-live-showcase.ts';

const BIN = new URL('../../bin/ipipe.mjs', import.meta.url).pathname;

interface ShowcaseDocument {
  readonly schemaVersion: number;
  readonly seed: number;
  readonly simulated: { readonly requestsTotal: number; readonly requestsAnswered: number };
  readonly apps: {
    readonly rows: readonly {
      readonly app: string;
      readonly role: string;
      readonly hostOnly: {
        readonly hostCores: number;
        readonly throughputMops: number;
        readonly placement: string;
      };
      readonly offloaded: {
        readonly hostCores: number;
        readonly throughputMops: number;
        readonly placement: string;
      };
    }[];
  };
  readonly live: {
    readonly sent: number;
    readonly answered: number;
    readonly errorReplies: number;
    readonly actors: readonly { readonly name: string; readonly requests: number; readonly p99Us: number }[];
    readonly migrations: readonly { readonly name: string; readonly phasesMs: Record<string, number> }[];
  };
  readonly echoCost: {
    readonly rounds: number;
    readonly servers: readonly {
      readonly kind: string;
      readonly throughputPerSec: number;
      readonly p50Us: number;
      readonly ratioToRaw: number;
      readonly roundThroughputs: readonly number[];
    }[];
  };
  readonly rkv: {
    readonly replicas: readonly {
      readonly pid: number;
      readonly actors: readonly { readonly name: string; readonly domain: string }[];
    }[];
    readonly rejoinedAfterMs: number;
    readonly firstLeader: number;
    readonly newLeader: number;
    readonly electedAfterMs: number;
    readonly load: {
      readonly answered: number;
      readonly get: { readonly count: number };
      readonly del: { readonly count: number };
      readonly timeline: { readonly answered: readonly number[] };
      readonly check: { readonly verdict: string };
    };
    readonly scan: RkvLiveShowcaseResult['scan'];
  };
}

test('showcase --json: the simulated and the live half, nothing lost in either', { timeout: 240_000 }, () => {
  const run = spawnSync(process.execPath, [BIN, 'showcase', '--seed', '11', '--json'], {
    encoding: 'utf8',
    timeout: 240_000,
  });
  assert.equal(run.status, 0, run.stderr);
  const document = JSON.parse(run.stdout) as ShowcaseDocument;
  assert.equal(document.schemaVersion, 1);
  assert.equal(document.seed, 11);
  assert.ok(document.simulated.requestsTotal > 10_000);
  assert.equal(document.simulated.requestsAnswered, document.simulated.requestsTotal);
  // The applications part: every app's roles, both placements measured at the same offered load.
  assert.deepEqual(
    document.apps.rows.map((r) => `${r.app}/${r.role}`),
    ['rkv/leader', 'rkv/follower', 'dt/coordinator', 'dt/participant', 'rta/worker'],
  );
  for (const row of document.apps.rows) {
    assert.equal(row.hostOnly.placement, 'host-only');
    assert.equal(row.offloaded.placement, 'offloaded');
    assert.ok(
      row.hostOnly.throughputMops > 0 && row.offloaded.throughputMops > 0,
      `${row.app}/${row.role} served`,
    );
    // Host-only runs every actor on the host: it cannot keep fewer host cores busy than offloading.
    assert.ok(row.hostOnly.hostCores >= row.offloaded.hostCores, `${row.app}/${row.role}`);
  }
  const live = document.live;
  assert.ok(live.sent > 1_000, `only ${live.sent} live requests`);
  assert.equal(live.answered, live.sent, 'every live request answered');
  assert.equal(live.errorReplies, 0);
  assert.deepEqual(
    live.actors.map((a) => a.name),
    ['kv-cache', 'flow-monitor', 'top-ranker', 'flow-classifier'],
  );
  for (const actor of live.actors) {
    assert.ok(actor.requests > 0, `${actor.name} served nothing`);
    assert.ok(actor.p99Us > 0);
  }
  assert.ok(live.migrations.length >= 1, 'the classifier (at least) moved');
  for (const m of live.migrations)
    assert.deepEqual(Object.keys(m.phasesMs), ['prepare', 'ready', 'gone', 'clean']);
  // What the runtime costs: three servers measured every round, each answered the echo load.
  const { echoCost } = document;
  assert.deepEqual(
    echoCost.servers.map((s) => s.kind),
    ['raw', 'node', 'node-core'],
  );
  for (const server of echoCost.servers) {
    assert.equal(server.roundThroughputs.length, echoCost.rounds, `${server.kind}: a run per round`);
    assert.ok(
      server.roundThroughputs.every((t) => t > 100),
      `${server.kind} answered too little: ${server.roundThroughputs}`,
    );
    assert.ok(server.p50Us > 0);
    assert.ok(server.ratioToRaw > 0 && Number.isFinite(server.ratioToRaw));
  }
  assert.equal(echoCost.servers[0]?.ratioToRaw, 1);
  const rkv = document.rkv;
  assert.equal(rkv.replicas.length, 3);
  assert.notEqual(rkv.newLeader, rkv.firstLeader, 'a survivor leads after the kill');
  assert.ok(rkv.electedAfterMs > 0 && rkv.electedAfterMs < 20_000);
  assert.ok(rkv.rejoinedAfterMs > rkv.electedAfterMs, 'the killed node ran again after the election');
  for (const replica of rkv.replicas) {
    const domains = Object.fromEntries(
      replica.actors.map((actor) => [actor.name.replace(/-\d+$/, ''), actor.domain]),
    );
    assert.deepEqual(domains, {
      'rkv-consensus': 'nic',
      'rkv-memtable': 'nic',
      'rkv-sstable': 'host',
      'rkv-compaction': 'host',
      'rkv-log': 'host',
    });
  }
  assert.ok(rkv.load.answered > 100, `only ${rkv.load.answered} RKV operations answered`);
  assert.equal(
    rkv.load.timeline.answered.reduce((a, b) => a + b, 0),
    rkv.load.answered,
  );
  assert.equal(rkv.load.check.verdict, 'linearizable');
  assert.ok(rkv.load.del.count > 0, 'some of the checked operations were DELs');
  assert.ok(rkv.scan.keys > 0, 'SCAN read the store back');
  assert.equal(rkv.scan.inOrder, true, 'SCAN pages give each key once, in byte order');
  assert.ok(
    rkv.scan.pages >= Math.ceil(rkv.scan.keys / rkv.scan.pageLimit),
    'pages of at most pageLimit keys',
  );
});
