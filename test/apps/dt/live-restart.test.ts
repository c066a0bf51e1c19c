/**
 * The coordinator as a real process with a real log file, killed with SIGKILL in the middle of a
 * bank-transfer load and restarted from its log (twice). Participants and clients live in this
 * process (participants are other machines in DT: they do not die with the coordinator); the child
 * is reached over IPC (fixtures/coordinator-process.ts). Afterwards: every transaction a client was
 * told committed passed a commit point, the participants hold exactly the last committed version of
 * every account, no lock is left, the history is serializable, and the money is all there.
 */

import assert from 'node:assert/strict';
import { type ChildProcess, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DtClient } from '../../../src/apps/dt/client.ts';
import type { LogRecoveryReport } from '../../../src/apps/dt/logger-logic.ts';
import { type DtMessage, dtMessages, isParticipantInput } from '../../../src/apps/dt/messages.ts';
import { MemoryParticipantStore, ParticipantLogic } from '../../../src/apps/dt/participant-logic.ts';
import { checkSerializable, describeViolation } from '../../../src/apps/dt/serializability.ts';
import {
  type Address,
  type DtEvent,
  type DtOutput,
  hashShardMap,
  type LoggedWrite,
} from '../../../src/apps/dt/types.ts';
import { bankWorkload, decodeBalance } from '../../../src/apps/dt/workload.ts';
import { Random } from '../../../src/random.ts';

const CHILD = fileURLToPath(new URL('./fixtures/coordinator-process.ts', import.meta.url));
const SHARDS = 3;
const CLIENTS = 6;

const nowNs = (): number => Math.round(performance.now() * 1e6);
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(5);
  }
}

test('a coordinator process SIGKILLed mid-load recovers from its log file: no acknowledged commit is lost', {
  timeout: 60_000,
}, async () => {
  const seed = 4242;
  console.log(`live restart seed ${seed}`);
  const directory = mkdtempSync(join(tmpdir(), 'ipipe-dt-live-'));
  const logPath = join(directory, 'coordinator.log');
  const shards = hashShardMap(SHARDS);
  const bank = bankWorkload({ accounts: 12, initialBalance: 1000, maxTransfer: 300 });

  // ---- participants (this process) ----------------------------------------------------------
  const stores = Array.from({ length: SHARDS }, () => new MemoryParticipantStore());
  const participants = stores.map(
    (store, shard) => new ParticipantLogic(store, { shard, shards, leaseNs: 100_000_000 }),
  );
  participants.forEach((logic, shard) => {
    const items = bank.initialData().filter((item) => shards.shardOf(item.key) === shard);
    logic.handle({ type: 'participant-load', items }, nowNs());
  });

  // ---- the network ----------------------------------------------------------------------------
  let child: ChildProcess | undefined;
  const receivers = new Map<number, (message: DtMessage) => void>();
  const committed = new Map<string, { epoch: number; writes: readonly LoggedWrite[] }>();
  const requests = new Map<string, { key: string; version: number }[]>();
  const reports: LogRecoveryReport[] = [];
  let recoveredCommits = 0;

  function performParticipant(shard: number, outputs: readonly DtOutput[]): void {
    for (const output of outputs) {
      if (output.kind === 'send') route(output.to, output.message);
      else if (output.kind === 'timer') {
        setTimeout(() => {
          const message = output.message;
          if (isParticipantInput(message))
            performParticipant(shard, participants[shard]!.handle(message, nowNs()));
        }, output.delayNs / 1e6);
      }
    }
  }

  function route(to: Address, message: DtMessage): void {
    setImmediate(() => {
      if (to.kind === 'participant') {
        if (isParticipantInput(message))
          performParticipant(to.shard, participants[to.shard]!.handle(message, nowNs()));
      } else if (to.kind === 'client') {
        receivers.get(to.client)?.(message);
      } else if (to.kind === 'coordinator') {
        if (message.type === 'commit-request') {
          requests.set(
            `${message.client}:${message.seq}`,
            message.reads.map(({ key, version }) => ({ key, version })),
          );
        }
        // A dead coordinator loses what is sent to it; senders retransmit. The process can die
        // between the `connected` check and the write: the callback takes that EPIPE (without
        // one it is an 'error' event on the child, which nothing handles once the start is over).
        if (child?.connected) {
          child.send({ to: 'coordinator', bytes: dtMessages.encode(message) }, () => {});
        }
      }
    });
  }

  function startCoordinator(nonce: number): Promise<void> {
    const coordinatorProcess = fork(
      CHILD,
      [
        JSON.stringify({
          logPath,
          nonce,
          shardCount: SHARDS,
          retryMs: 20,
          txnTimeoutMs: 300,
          logLimitRecords: 16,
        }),
      ],
      { execArgv: ['--import', import.meta.resolve('tsx')], serialization: 'advanced', stdio: 'inherit' },
    );
    child = coordinatorProcess;
    return new Promise((resolve, reject) => {
      coordinatorProcess.once('error', reject);
      coordinatorProcess.on(
        'message',
        (raw: {
          kind: string;
          to?: Address;
          bytes?: Uint8Array;
          event?: DtEvent;
          report?: LogRecoveryReport;
        }) => {
          if (raw.kind === 'ready' && raw.report) {
            reports.push(raw.report);
            resolve();
          } else if (raw.kind === 'send' && raw.to && raw.bytes) {
            route(raw.to, dtMessages.decode(raw.bytes));
          } else if (raw.kind === 'event' && raw.event?.kind === 'committed') {
            const { owner, writes, recovered } = raw.event;
            if (recovered) recoveredCommits++;
            const key = `${owner.client}:${owner.seq}`;
            const known = committed.get(key);
            assert.ok(!known || known.epoch === owner.epoch, `${key} committed in two epochs`);
            committed.set(key, { epoch: owner.epoch, writes });
          }
        },
      );
    });
  }

  function killCoordinator(): Promise<void> {
    const running = child;
    if (!running) return Promise.resolve();
    return new Promise((resolve) => {
      running.once('exit', () => resolve());
      running.kill('SIGKILL');
    });
  }

  // ---- clients --------------------------------------------------------------------------------
  const acknowledged = new Set<string>();
  let aborted = 0;
  let stop = false;
  const clients = Array.from({ length: CLIENTS }, (_, i) => {
    const id = i + 1;
    return new DtClient({
      client: id,
      shards,
      retryMs: 20,
      transport: {
        send: (to, message) => route(to, message),
        listen: (receive) => receivers.set(id, receive),
      },
    });
  });
  async function runClient(client: DtClient, random: Random): Promise<void> {
    while (!stop) {
      const plan = bank.next(random);
      const txn = client.begin();
      const values = await Promise.all(plan.reads.map((key) => txn.read(key)));
      const written = plan.compute(values);
      plan.writeKeys.forEach((key, i) => {
        txn.write(key, written[i]!);
      });
      const outcome = await txn.commit();
      if (outcome.outcome === 'committed') acknowledged.add(`${txn.id.client}:${txn.id.seq}`);
      else if (outcome.outcome === 'aborted') aborted++;
      else assert.fail(`invalid outcome for a well-formed transfer: ${outcome.reason}`);
    }
  }

  try {
    await startCoordinator(1);
    const root = new Random(seed);
    const running = clients.map((client, i) => runClient(client, root.fork(`client-${i}`)));

    // Two SIGKILLs under load, each followed by a restart from the same log file.
    for (const nonce of [2, 3]) {
      const target = acknowledged.size + 40;
      await until(() => acknowledged.size >= target, 20_000, `${target} acknowledged commits`);
      await killCoordinator();
      await sleep(60); // clients keep retrying into the void; locks stand
      await startCoordinator(nonce);
    }
    const target = acknowledged.size + 40;
    await until(
      () => acknowledged.size >= target,
      20_000,
      `${target} acknowledged commits after the restarts`,
    );
    stop = true;
    await Promise.all(running);
    // Quiescence: every lock released (recovered commits redone, presumed aborts answered).
    await until(
      () => stores.every((store) => store.lockedKeys().length === 0),
      10_000,
      'every lock released',
    );
  } finally {
    stop = true;
    for (const client of clients) client.close();
    await killCoordinator();
    rmSync(directory, { recursive: true, force: true });
  }

  console.log(
    `${acknowledged.size} acknowledged commits, ${aborted} aborts, ${committed.size} commit points, ` +
      `${recoveredCommits} commits redone by recovery; log at start-ups: ${reports.map((r) => `${r.records} records`).join(', ')}`,
  );

  // Each restart found the log the previous incarnation wrote (its epoch record at least).
  assert.equal(reports.length, 3);
  assert.deepEqual(
    reports.map((report) => report.epoch),
    [0, 1, 2],
  );
  assert.ok(reports.every((report) => report.outcome === 'clean'));

  // No acknowledged commit was lost.
  for (const key of acknowledged)
    assert.ok(committed.has(key), `client was told ${key} committed, but no commit point`);

  // The data is exactly what the committed history wrote, and the money is all there.
  const latest = new Map<string, LoggedWrite>();
  for (const { writes } of committed.values()) {
    for (const write of writes)
      if ((latest.get(write.key)?.version ?? -1) < write.version) latest.set(write.key, write);
  }
  let total = 0;
  for (const { key } of bank.initialData()) {
    const item = stores[shards.shardOf(key)]!.get(key);
    assert.equal(
      item?.version ?? 0,
      latest.get(key)?.version ?? 0,
      `${key}: a committed write lost or an uncommitted one applied`,
    );
    assert.equal(item?.lock, undefined);
    total += decodeBalance(item?.value);
  }
  assert.equal(total, bank.totalBalance);

  const verdict = checkSerializable(
    [...committed].map(([key, record]) => ({
      id: `${key}@${record.epoch}`,
      reads: requests.get(key) ?? [],
      writes: record.writes.map(({ key: written, version }) => ({ key: written, version })),
    })),
    { contiguousVersions: true },
  );
  assert.ok(verdict.ok, verdict.ok ? '' : verdict.violations.map(describeViolation).join('\n'));
});
