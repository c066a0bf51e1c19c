/**
 * The entry point of one replica process of RKV's live cluster (spawned by supervisor.ts with
 * its `ClusterReplicaConfig` as JSON in argv[2]). It starts a `ClusterReplica`, reports to the
 * supervisor over the IPC channel (`ready`, then `roles` whenever a shard's leader changes, or
 * `failed`), and stops gracefully on SIGINT, SIGTERM or when the supervisor goes away (the IPC
 * channel closes), so a killed supervisor leaves no replica behind.
 *
 * Logs go to stderr, which the supervisor points at `<data-dir>/replica-<i>/replica.log`.
 */

import { IpipeError } from '../../../errors.ts';
import { ClusterReplica, type ClusterReplicaConfig, type ShardView } from './replica-host.ts';

/** Messages a replica process sends its supervisor. */
export type ReplicaReport =
  | { readonly type: 'ready'; readonly pid: number; readonly respPort: number; readonly boot: number }
  | { readonly type: 'roles'; readonly views: ShardView[] }
  | { readonly type: 'failed'; readonly code: string; readonly message: string };

function report(message: ReplicaReport): void {
  if (process.send !== undefined && process.connected) process.send(message);
}

function log(text: string): void {
  process.stderr.write(`${new Date().toISOString()} ${text}\n`);
}

async function runReplica(): Promise<void> {
  const raw = process.argv[2];
  if (raw === undefined) {
    process.stderr.write('usage: replica-main <config JSON> (started by `ipipe cluster up`)\n');
    process.exitCode = 2;
    return;
  }
  const config = JSON.parse(raw) as ClusterReplicaConfig;
  let replica: ClusterReplica;
  try {
    replica = await ClusterReplica.start(config);
  } catch (error) {
    const code = error instanceof IpipeError ? error.code : 'UNEXPECTED';
    const message = error instanceof Error ? error.message : String(error);
    log(`replica ${config.replicaId}: failed to start: ${message} [${code}]`);
    report({ type: 'failed', code, message });
    process.exitCode = 3;
    // Let the IPC message leave before exiting.
    setTimeout(() => process.exit(3), 100).unref();
    return;
  }
  log(
    `replica ${config.replicaId} (pid ${process.pid}, boot ${replica.boot}) serving RESP on ${config.host}:${replica.respPort}`,
  );
  replica.onRoles((views) => {
    log(
      `replica ${config.replicaId} roles: ${views.map((view) => `shard ${view.shard} ${view.role} (leader ${view.leader ?? '?'})`).join(', ')}`,
    );
    report({ type: 'roles', views });
  });
  report({ type: 'ready', pid: process.pid, respPort: replica.respPort, boot: replica.boot });

  let stopping = false;
  const stop = (why: string): void => {
    if (stopping) return;
    stopping = true;
    log(`replica ${config.replicaId}: stopping (${why})`);
    const force = setTimeout(() => process.exit(1), 10_000);
    force.unref();
    replica.stop().then(
      () => {
        log(`replica ${config.replicaId}: stopped cleanly`);
        process.disconnect?.();
        process.exit(0);
      },
      (error: unknown) => {
        log(
          `replica ${config.replicaId}: error while stopping: ${error instanceof Error ? error.message : String(error)}`,
        );
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('disconnect', () => stop('the supervisor went away'));
}

await runReplica();
