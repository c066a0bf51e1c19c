/**
 * DT on three live node processes (coordinator + logger on node 0, a participant on each of nodes
 * 1 and 2), bank transfers from four clients, and the coordinator's process SIGKILLed mid-load and
 * restarted on the same log file. Afterwards: the total balance is what it was, and every account
 * has seen at least as many committed writes as clients were told committed (no acknowledged
 * commit lost: each commit installs the next version of the keys it writes).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { DT_NAMES, DtClusterConnection, dtClusterSpec } from '../../../src/apps/dt/live-cluster.ts';
import { accountKey, bankWorkload, decodeBalance } from '../../../src/apps/dt/workload.ts';
import { LocalCluster } from '../../../src/platform/live/cluster/launch.ts';
import { Random } from '../../../src/random.ts';
import { freeUdpPort } from '../../platform/live/free-port.ts';

const ACCOUNTS = 24;
/** How long a lock may outlive the clients (25 leases of 200 ms): longer means it was left for good. */
const LOCK_SETTLE_MS = 5_000;

test('DT live: the coordinator process is killed mid-load and restarted from its log; nothing acknowledged is lost', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ipipe-dt-'));
  const nodes = [];
  for (const id of [0, 1, 2])
    nodes.push({ id, address: '127.0.0.1', port: await freeUdpPort(), nicCores: 1, hostCores: 1 });
  const spec = dtClusterSpec({ shards: 2, nodes });
  assert.deepEqual(
    spec.actors.map((a) => `${a.name}@${a.node}`),
    ['dt-coordinator@0', 'dt-logger@0', 'dt-participant-0@1', 'dt-participant-1@2'],
  );
  const file = join(dir, 'cluster.json');
  writeFileSync(file, JSON.stringify(spec));
  const logPath = join(dir, 'coordinator.log');
  const bank = bankWorkload({ accounts: ACCOUNTS, initialBalance: 1000, maxTransfer: 50 });
  const cluster = await LocalCluster.launch({ file, spec });
  const dt = await DtClusterConnection.connect(spec);
  const acknowledged = new Map<string, number>();
  let committed = 0;
  let aborted = 0;
  let running = true;
  let slowestUnlockMs = 0;
  try {
    await dt.setup({ logPath, nonce: 1 }, bank.initialData());
    const random = new Random(2026, 'dt-live');
    const clients = [1, 2, 3, 4].map((id) => dt.client(id));
    const loop = async (index: number): Promise<void> => {
      const client = clients[index];
      assert.ok(client);
      while (running) {
        const plan = bank.next(random);
        const txn = client.begin();
        const values = [];
        for (const key of plan.reads) values.push(await txn.read(key));
        const writes = plan.compute(values);
        plan.writeKeys.forEach((key, i) => {
          txn.write(key, writes[i] as Uint8Array);
        });
        const outcome = await txn.commit();
        if (outcome.outcome === 'committed') {
          committed++;
          for (const key of plan.writeKeys) acknowledged.set(key, (acknowledged.get(key) ?? 0) + 1);
        } else aborted++;
      }
    };
    const loops = clients.map((_, index) => loop(index));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const beforeKill = committed;
    assert.ok(beforeKill > 0, 'transactions committed before the crash');
    await cluster.kill(0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cluster.start(0);
    await dt.reconnect(0);
    // The restarted node's logger and coordinator are fresh actors: set them up again, on the same
    // log file, with a higher epoch. The coordinator replays the log and finishes what was in doubt.
    void dt.ask(DT_NAMES.logger, {
      type: 'logger-setup',
      storage: `file:${logPath}`,
      coordinator: DT_NAMES.coordinator,
      groupCommitNs: 100_000,
      recovery: 'refuse-corruption',
    });
    await dt.startCoordinator({ logPath, nonce: 2 });
    const deadline = Date.now() + 8_000;
    while (committed < beforeKill + 20 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    running = false;
    await Promise.race([Promise.all(loops), new Promise((r) => setTimeout(r, 5_000))]);
    assert.ok(
      committed >= beforeKill + 20,
      `the cluster served again after the restart (${beforeKill} → ${committed})`,
    );

    // Read every account back (reads only, then abandon) with its version. A lock still standing
    // here belongs to a transaction that was in flight when the clients stopped, or to one the dead
    // incarnation left: the participant's lease (200 ms) makes it ask the recovered coordinator,
    // which answers commit or abort (docs/apps/dt.md, "Participants never hold a lock forever"). So
    // a lock must go within a few leases; one that outlives LOCK_SETTLE_MS is left for good.
    const checker = dt.client(99);
    const readSettled = async (key: string) => {
      const started = Date.now();
      for (;;) {
        const txn = checker.begin();
        const read = await txn.readWithVersion(key);
        txn.abandon();
        if (!read.locked || Date.now() - started > LOCK_SETTLE_MS)
          return { read, waitedMs: Date.now() - started };
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    // First every lock goes (or the test fails naming it), then one sweep reads the settled bank.
    for (let index = 0; index < ACCOUNTS; index++) {
      const key = accountKey(index);
      const { read, waitedMs } = await readSettled(key);
      slowestUnlockMs = Math.max(slowestUnlockMs, waitedMs);
      assert.equal(read.locked, false, `${key} is still locked ${waitedMs} ms after the clients stopped`);
    }
    let total = 0;
    for (let index = 0; index < ACCOUNTS; index++) {
      const key = accountKey(index);
      const txn = checker.begin();
      const read = await txn.readWithVersion(key);
      txn.abandon();
      assert.equal(read.locked, false, `${key} is locked again after every lock had gone`);
      total += decodeBalance(read.value);
      assert.ok(
        read.version >= (acknowledged.get(key) ?? 0),
        `${key}: version ${read.version} < ${acknowledged.get(key)} acknowledged commits that wrote it`,
      );
    }
    assert.equal(total, bank.totalBalance, 'money is neither made nor lost');
    for (const client of [...clients, checker]) client.close();
  } finally {
    running = false;
    await dt.close();
    await cluster.stopAll();
  }
  process.stderr.write(
    `dt live: ${committed} committed, ${aborted} aborted across a coordinator crash; ` +
      `slowest lock to clear after the clients stopped: ${slowestUnlockMs} ms\n`,
  );
});
