/**
 * `npm start` (ipipe showcase): both halves run and hold their promises — the simulated
 * walkthrough answers every request, and the live node answers every request exactly once while
 * actors migrate, with each migration's phases reported.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

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
});
