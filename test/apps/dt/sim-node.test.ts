/**
 * DT's actors on a simulated SmartNIC node (SimNode: NIC cores, host cores, PCIe, the hybrid
 * scheduler), through the experiment hook (deployDtOnSimNode): bank transfers from closed-loop
 * clients over the simulated wire, then the bank invariant, the serializability of what
 * committed (rebuilt from the coordinator's `committed` events on the diagnostics channel), data
 * matching the committed history, no lock left, and the logger on the host fsyncing the log.
 */

import assert from 'node:assert/strict';
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DT_EVENT_CHANNEL, DT_LOG_RECOVERY_CHANNEL, type DtActorEvent } from '../../../src/apps/dt/actors.ts';
import { encodeLogRecord, replayLog, scanLog } from '../../../src/apps/dt/log-format.ts';
import type { LogRecoveryReport } from '../../../src/apps/dt/logger-logic.ts';
import {
  checkSerializable,
  describeViolation,
  type HistoryTxn,
} from '../../../src/apps/dt/serializability.ts';
import { deployDtOnSimNode } from '../../../src/apps/dt/sim-deployment.ts';
import type { DtEvent, LoggedWrite } from '../../../src/apps/dt/types.ts';
import { bankWorkload, decodeBalance } from '../../../src/apps/dt/workload.ts';
import { getNicProfile, hostOf } from '../../../src/hw/index.ts';
import { EventKernel } from '../../../src/platform/sim/event-kernel.ts';
import { timingFor } from '../../../src/platform/sim/hardware-timing.ts';
import { SimNode } from '../../../src/platform/sim/sim-node.ts';
import { Random } from '../../../src/random.ts';
import { makeNode, recordCommits } from './sim-node-helpers.ts';

test('bank transfers on a SimNode: invariant, serializability and durability of what committed', () => {
  const seed = 20261122;
  console.log(`sim-node DT seed ${seed}`);
  const { kernel, node } = makeNode();
  const bank = bankWorkload({ accounts: 24, initialBalance: 1000, maxTransfer: 300 });
  const { value: dt, committed } = recordCommits(() => {
    const deployment = deployDtOnSimNode(node, {
      shards: 3,
      initialData: bank.initialData(),
      logLimitRecords: 16,
    });
    deployment.runClosedLoop({ clients: 8, workload: bank, random: new Random(seed), untilNs: 5_000_000 });
    // Mid-load, a participant and the coordinator migrate to the host (and the participant back):
    // their state is their DMOs, so nothing may be lost.
    const participant = deployment.participants[0]!.id;
    kernel.at(1_500_000, () => node.migrate(participant, 'host'));
    kernel.at(2_500_000, () => node.migrate(deployment.coordinator.id, 'host'));
    kernel.at(3_500_000, () => {
      if (node.domainOf(participant) === 'host') node.migrate(participant, 'nic');
    });
    kernel.run({ untilNs: 20_000_000 });
    // (The scheduler may move the coordinator back to the NIC by itself afterwards.)
    assert.deepEqual(
      node.migrations.slice(0, 3).map((m) => `${m.name}:${m.from}->${m.to}`),
      ['dt-participant-0:nic->host', 'dt-coordinator:nic->host', 'dt-participant-0:host->nic'],
    );
    return deployment;
  });

  const committedByClient = dt.results.filter((r) => r.outcome.outcome === 'committed');
  const aborted = dt.results.filter((r) => r.outcome.outcome === 'aborted');
  console.log(
    `${dt.results.length} transactions: ${committedByClient.length} committed, ${aborted.length} aborted`,
  );
  assert.ok(committedByClient.length > 100, `only ${committedByClient.length} commits`);
  assert.ok(aborted.length > 0, 'contention should cause some aborts');
  assert.equal(dt.results.filter((r) => r.outcome.outcome === 'invalid').length, 0);

  // Every acknowledged commit passed the commit point, and every commit point was acknowledged
  // (no faults here, so nothing is left in doubt).
  for (const result of committedByClient) {
    assert.ok(committed.has(`${result.txn.client}:${result.txn.seq}`), 'acknowledged but never committed');
  }
  assert.equal(committed.size, committedByClient.length);

  // Serializability of the committed history.
  const reads = new Map(dt.results.map((r) => [`${r.txn.client}:${r.txn.seq}`, r.reads]));
  const history: HistoryTxn[] = [...committed].map(([key, record]) => ({
    id: record.id,
    reads: reads.get(key) ?? [],
    writes: record.writes.map(({ key: written, version }) => ({ key: written, version })),
  }));
  const verdict = checkSerializable(history, { contiguousVersions: true });
  assert.ok(verdict.ok, verdict.ok ? '' : verdict.violations.map(describeViolation).join('\n'));

  // The participants hold exactly the last committed version of every account; no lock stands;
  // and the money is all there.
  const latest = new Map<string, LoggedWrite>();
  for (const record of committed.values()) {
    for (const write of record.writes) {
      if ((latest.get(write.key)?.version ?? -1) < write.version) latest.set(write.key, write);
    }
  }
  let total = 0;
  let rows = 0;
  for (let shard = 0; shard < 3; shard++) {
    for (const [key, item] of dt.participantItems(shard)) {
      rows++;
      assert.equal(item.lock, undefined, `${key} still locked`);
      assert.equal(item.version, latest.get(key)?.version ?? 0, `${key}: version`);
      total += decodeBalance(item.value);
    }
  }
  assert.equal(rows, 24);
  assert.equal(total, bank.totalBalance);

  // The log lives on the host's disk, synced; after checkpoints it holds only a bounded tail.
  assert.ok(dt.disk, 'a simulated disk');
  assert.equal(dt.disk.unsyncedBytes, 0);
  assert.ok(
    dt.disk.syncCount > 0 && dt.disk.syncCount <= committedByClient.length + 8,
    `${dt.disk.syncCount} fsyncs`,
  );
  const replay = replayLog(scanLog(dt.disk.readAll()).records);
  assert.ok(replay.commits.length < committedByClient.length, 'checkpoints compacted the log');
  assert.equal(node.domainOf(dt.logger.id), 'host', 'the logging actor is pinned to the host');
});

test('the actors over a real log file: a second deployment recovers the first one’s commits from it', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ipipe-dt-sim-'));
  const storage = `file:${join(directory, 'coordinator.log')}`;
  const bank = bankWorkload({ accounts: 12, initialBalance: 1000, maxTransfer: 100 });
  const reports: LogRecoveryReport[] = [];
  const recovered: Extract<DtEvent, { kind: 'recovered' }>[] = [];
  const onReport = (message: unknown): void => {
    reports.push((message as { report: LogRecoveryReport }).report);
  };
  const onEvent = (message: unknown): void => {
    const { event } = message as DtActorEvent;
    if (event.kind === 'recovered') recovered.push(event);
  };
  subscribe(DT_LOG_RECOVERY_CHANNEL, onReport);
  subscribe(DT_EVENT_CHANNEL, onEvent);
  try {
    const first = makeNode();
    const dt = deployDtOnSimNode(first.node, {
      shards: 2,
      storage,
      initialData: bank.initialData(),
      logLimitRecords: 1000,
    });
    dt.runClosedLoop({ clients: 4, workload: bank, random: new Random(3), untilNs: 800_000 });
    first.kernel.run({ untilNs: 10_000_000 });
    const committedClients = new Set(
      dt.results.filter((r) => r.outcome.outcome === 'committed').map((r) => r.txn.client),
    );
    const commits = dt.results.filter((r) => r.outcome.outcome === 'committed').length;
    console.log(`${commits} commits on a real log file`);
    assert.ok(commits > 10, `only ${commits} commits`);

    // "Restart": a new node, the same log file.
    const second = makeNode();
    deployDtOnSimNode(second.node, { shards: 2, storage, initialData: bank.initialData() });
    second.kernel.run({ untilNs: 2_000_000 });

    assert.equal(reports.length, 2);
    assert.equal(reports[0]?.records, 0);
    assert.equal(reports[1]?.outcome, 'clean');
    // One epoch record, then every commit record (no checkpoint under this limit).
    assert.equal(reports[1]?.records, 1 + commits);
    assert.deepEqual(
      recovered.map((event) => [event.epoch, event.clients]),
      [
        [1, 0],
        [2, committedClients.size],
      ],
    );
    assert.equal(recovered[1]?.pending, commits, 'every logged commit is redone (idempotently)');
  } finally {
    unsubscribe(DT_LOG_RECOVERY_CHANNEL, onReport);
    unsubscribe(DT_EVENT_CHANNEL, onEvent);
    rmSync(directory, { recursive: true, force: true });
  }
});

test('a log corrupt in the middle stops the logging actor (and so the coordinator) unless told to discard', () => {
  const directory = mkdtempSync(join(tmpdir(), 'ipipe-dt-corrupt-'));
  const path = join(directory, 'coordinator.log');
  const records = [
    encodeLogRecord({ type: 'epoch', epoch: 4 }),
    encodeLogRecord({ type: 'checkpoint', epoch: 4, clients: [{ client: 1, seq: 3 }] }),
    encodeLogRecord({ type: 'epoch', epoch: 5 }),
  ];
  const file = Buffer.concat(records);
  const damaged = records[0]!.length + 14;
  file[damaged] = file[damaged]! ^ 0xff; // inside the checkpoint's payload; a valid record follows
  writeFileSync(path, file);
  const errors: string[] = [];
  const reports: LogRecoveryReport[] = [];
  const onReport = (message: unknown): void => {
    reports.push((message as { report: LogRecoveryReport }).report);
  };
  subscribe(DT_LOG_RECOVERY_CHANNEL, onReport);
  try {
    const log = {
      debug() {},
      info() {},
      warn() {},
      error(fields: Readonly<Record<string, unknown>>, message: string) {
        errors.push(`${String(fields['code'])}: ${message}`);
      },
    };
    const nic = getNicProfile('stingray-ps225');
    const kernel = new EventKernel();
    const node = new SimNode({ timing: timingFor(nic, hostOf(nic)), kernel, log });
    const dt = deployDtOnSimNode(node, { shards: 2, storage: `file:${path}`, namePrefix: 'bad' });
    let answered = false;
    dt.client(1).run({ reads: [], writeKeys: ['k'], compute: () => [new Uint8Array(1)] }, () => {
      answered = true;
    });
    kernel.run({ untilNs: 5_000_000 });
    assert.equal(reports.length, 0);
    assert.equal(errors.length, 1);
    assert.match(
      errors[0]!,
      /^IPIPE_ERR_DT_LOG_CORRUPT: coordinator log file:.* is corrupt at byte \d+ \(bad-checksum\) and 1 valid record/,
    );
    assert.equal(answered, false, 'no transaction is served from a damaged log');

    // The operator accepts the loss: the log is cut at the damage and the report says what was lost.
    const retry = makeNode();
    const ok = deployDtOnSimNode(retry.node, {
      shards: 2,
      storage: `file:${path}`,
      recovery: 'discard-after-corruption',
      namePrefix: 'ok',
    });
    let outcome = '';
    ok.client(1).run({ reads: [], writeKeys: ['k'], compute: () => [new Uint8Array(1)] }, (result) => {
      outcome = result.outcome.outcome;
    });
    retry.kernel.run({ untilNs: 5_000_000 });
    assert.equal(reports.length, 1);
    assert.equal(reports[0]?.outcome, 'corruption-discarded');
    assert.equal(reports[0]?.recordsLost, 1);
    assert.equal(reports[0]?.epoch, 4);
    assert.equal(outcome, 'committed');
  } finally {
    unsubscribe(DT_LOG_RECOVERY_CHANNEL, onReport);
    rmSync(directory, { recursive: true, force: true });
  }
});
