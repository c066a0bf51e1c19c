/**
 * DT on a cluster of live nodes (issue 6: "DT live: kill the coordinator process mid-load,
 * restart it from its log"): the coordinator on node 0's NIC with the logging actor pinned to
 * node 0's host (the log is a real file, fsynced before a commit is acknowledged), participants
 * on the other nodes; clients reach every party over UDP.
 *
 *   client ──read──▶ participant (node 1…)          client ──commit──▶ coordinator (node 0 NIC)
 *                                                    coordinator ──PEER──▶ participants: lock, validate
 *                                                    coordinator ──PCIe──▶ logger (node 0 host): fsync
 *                                                    coordinator ──PEER──▶ participants: commit → ack
 *
 * Participants keep their tables in DMOs only (as in the paper): a participant process that dies
 * loses its shard. The coordinator's node may die: restarted with the same log file and a higher
 * `nonce`, the logger replays the log and the coordinator finishes or aborts every in-doubt
 * transaction (coordinator-logic.ts), so no acknowledged commit is lost.
 */

import { fileURLToPath } from 'node:url';
import { ConfigError } from '../../errors.ts';
import { type ClusterSpec, parseClusterSpec } from '../../platform/live/cluster/cluster-file.ts';
import { connectToNodes } from '../../platform/live/cluster/node-clients.ts';
import { IpipeClient } from '../../platform/live/net/client.ts';
import { DEFAULT_MAX_FRAME_BYTES, HEADER_BYTES } from '../../platform/live/net/wire.ts';
import { DtClient, type DtClientTransport } from './client.ts';
import { type DtMessage, dtMessages, MAX_RECOVERY_ITEMS } from './messages.ts';
import { type Address, hashShardMap, type ShardMap } from './types.ts';

/** The module the node processes load the DT actors from. */
export const DT_ACTORS_MODULE: string = fileURLToPath(
  new URL(import.meta.url.endsWith('.ts') ? './actors.ts' : './actors.js', import.meta.url),
);

export const DT_NAMES = Object.freeze({
  coordinator: 'dt-coordinator',
  logger: 'dt-logger',
  participant: (shard: number) => `dt-participant-${shard}`,
});

export interface DtClusterLayout {
  readonly shards: number;
  readonly nodes: readonly {
    readonly id: number;
    readonly address: string;
    readonly port: number;
    readonly nicCores?: number;
    readonly hostCores?: number;
  }[];
}

/** The cluster file: coordinator + logger on the first node, participants dealt over the others. */
export function dtClusterSpec(layout: DtClusterLayout): ClusterSpec {
  if (!(Number.isInteger(layout.shards) && layout.shards >= 1)) {
    throw new ConfigError('shards', `must be a positive integer, got ${layout.shards}`);
  }
  const first = layout.nodes[0];
  if (first === undefined) throw new ConfigError('nodes', 'a DT cluster needs at least one node');
  const others = layout.nodes.length > 1 ? layout.nodes.slice(1) : layout.nodes;
  const actors = [
    { name: DT_NAMES.coordinator, module: DT_ACTORS_MODULE, exportName: 'dtCoordinator', node: first.id },
    {
      name: DT_NAMES.logger,
      module: DT_ACTORS_MODULE,
      exportName: 'dtLogger',
      node: first.id,
      domain: 'host' as const,
    },
    ...Array.from({ length: layout.shards }, (_, shard) => ({
      name: DT_NAMES.participant(shard),
      module: DT_ACTORS_MODULE,
      exportName: 'dtParticipant',
      node: (others[shard % others.length] as { id: number }).id,
    })),
  ];
  return parseClusterSpec({ schemaVersion: 1, nodes: layout.nodes, actors });
}

/** How the coordinator and the participants are set up (the sim hook's defaults, in live time). */
export interface DtClusterSetup {
  /** Absolute path of the coordinator log file. */
  readonly logPath: string;
  /** Raise it on every coordinator restart: the new epoch fences the old one out of the log. */
  readonly nonce: number;
  readonly retryNs?: number;
  readonly txnTimeoutNs?: number;
  readonly logLimitRecords?: number;
  readonly leaseNs?: number;
  readonly maxValueBytes?: number;
}

/** Payload bytes a load message may take: one UDP frame (the wire's default limit) less its header. */
const LOAD_MESSAGE_BYTES = DEFAULT_MAX_FRAME_BYTES - HEADER_BYTES;

/** `items` as participant-load messages that each fit one frame. */
function loadChunks(items: readonly { key: string; value: Uint8Array }[]): DtMessage[] {
  const chunks: DtMessage[] = [];
  let current: { key: string; value: Uint8Array }[] = [];
  const message = (list: { key: string; value: Uint8Array }[]): DtMessage => ({
    type: 'participant-load',
    items: list,
  });
  for (const item of items) {
    const next = [...current, { key: item.key, value: item.value }];
    if (next.length <= MAX_RECOVERY_ITEMS && dtMessages.sizeOf(message(next)) <= LOAD_MESSAGE_BYTES) {
      current = next;
      continue;
    }
    if (current.length === 0) {
      throw new ConfigError(
        'initialData',
        `the item "${item.key}" alone does not fit one ${DEFAULT_MAX_FRAME_BYTES}-byte frame`,
      );
    }
    chunks.push(message(current));
    current = [{ key: item.key, value: item.value }];
  }
  if (current.length > 0) chunks.push(message(current));
  return chunks;
}

/** Talks to the DT parties of a running cluster over UDP (one client socket per node). */
export class DtClusterConnection {
  readonly spec: ClusterSpec;
  readonly shards: ShardMap;
  readonly #clients: Map<number, IpipeClient>;
  readonly #shardCount: number;

  private constructor(spec: ClusterSpec, clients: Map<number, IpipeClient>, shardCount: number) {
    this.spec = spec;
    this.#clients = clients;
    this.#shardCount = shardCount;
    this.shards = hashShardMap(shardCount);
  }

  static async connect(
    spec: ClusterSpec,
    options: { readonly timeoutMs?: number } = {},
  ): Promise<DtClusterConnection> {
    const shardCount = spec.actors.filter((a) => a.exportName === 'dtParticipant').length;
    // DtClient retransmits on its own schedule; a copy here only needs to outlive its answer.
    const clients = await connectToNodes(spec, { timeoutMs: options.timeoutMs ?? 2_000, retries: 0 });
    return new DtClusterConnection(spec, clients, shardCount);
  }

  #route(name: string): { client: IpipeClient; id: number } {
    const entry = this.spec.actors.find((a) => a.name === name);
    if (entry === undefined) throw new ConfigError('actor', `no DT party "${name}" in this cluster`);
    return { client: this.#clients.get(entry.node) as IpipeClient, id: entry.id as number };
  }

  /** Sends `message` to `name`; resolves with its answer, or undefined when none came in time. */
  async ask(name: string, message: DtMessage): Promise<DtMessage | undefined> {
    const { client, id } = this.#route(name);
    try {
      return await client.call(id, dtMessages, dtMessages, message);
    } catch {
      return undefined;
    }
  }

  /** Sets up the logger (log file), the participants, loads `initialData`, then the coordinator. */
  async setup(
    setup: DtClusterSetup,
    initialData: readonly { key: string; value: Uint8Array }[] = [],
  ): Promise<void> {
    const quiet = (name: string, message: DtMessage) => void this.ask(name, message);
    quiet(DT_NAMES.logger, {
      type: 'logger-setup',
      storage: `file:${setup.logPath}`,
      coordinator: DT_NAMES.coordinator,
      groupCommitNs: 100_000,
      recovery: 'refuse-corruption',
    });
    for (let shard = 0; shard < this.#shardCount; shard++) {
      quiet(DT_NAMES.participant(shard), {
        type: 'participant-setup',
        shard,
        shardCount: this.#shardCount,
        coordinator: DT_NAMES.coordinator,
        leaseNs: setup.leaseNs ?? 200_000_000,
      });
    }
    // Setups travel first: a participant drops a load that overtakes its setup.
    await new Promise((resolve) => setTimeout(resolve, 100));
    for (let shard = 0; shard < this.#shardCount; shard++) {
      const items = initialData.filter((item) => this.shards.shardOf(item.key) === shard);
      for (const chunk of loadChunks(items)) {
        quiet(DT_NAMES.participant(shard), chunk);
        // Pace the loads: a burst of datagrams overflows the node's socket buffer.
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    await this.startCoordinator(setup);
  }

  /** (Re)starts the coordinator: it replays the log through the logger, then serves. */
  async startCoordinator(setup: DtClusterSetup): Promise<void> {
    void this.ask(DT_NAMES.coordinator, {
      type: 'coordinator-setup',
      participants: Array.from({ length: this.#shardCount }, (_, shard) => DT_NAMES.participant(shard)),
      logger: DT_NAMES.logger,
      retryNs: setup.retryNs ?? 20_000_000,
      txnTimeoutNs: setup.txnTimeoutNs ?? 500_000_000,
      logLimitRecords: setup.logLimitRecords ?? 64,
      maxValueBytes: setup.maxValueBytes ?? 1024,
      nonce: setup.nonce,
    });
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  /** A transport for one DtClient: each message to its party, each answer back to the client. */
  transport(): DtClientTransport {
    let receive: ((message: DtMessage) => void) | undefined;
    return {
      send: (to: Address, message: DtMessage) => {
        const name =
          to.kind === 'coordinator'
            ? DT_NAMES.coordinator
            : to.kind === 'participant'
              ? DT_NAMES.participant(to.shard)
              : undefined;
        if (name === undefined) return;
        void this.ask(name, message).then((answer) => {
          if (answer !== undefined) receive?.(answer);
        });
      },
      listen: (handler) => {
        receive = handler;
      },
    };
  }

  /** A promise-based DT client with id `client` (unique per cluster and run). */
  client(client: number, options: { readonly retryMs?: number; readonly lastSeq?: number } = {}): DtClient {
    return new DtClient({
      client,
      shards: this.shards,
      transport: this.transport(),
      retryMs: options.retryMs ?? 50,
      ...(options.lastSeq === undefined ? {} : { lastSeq: options.lastSeq }),
    });
  }

  /** Swaps the socket toward `nodeId` (after that node's process restarted on the same port). */
  async reconnect(nodeId: number): Promise<void> {
    const node = this.spec.nodes.find((n) => n.id === nodeId);
    const old = this.#clients.get(nodeId);
    if (node === undefined || old === undefined) return;
    this.#clients.set(
      nodeId,
      await IpipeClient.connect({ host: node.address, port: node.port, timeoutMs: 2_000, retries: 0 }),
    );
    await old.close();
  }

  async close(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((client) => client.close()));
  }
}

/**
 * Reads every key through a fresh client (reads only, then abandons: nothing is written) and
 * returns the values, versions and how many were locked — the bank check after a load or a crash.
 */
export async function readAll(
  connection: DtClusterConnection,
  keys: readonly string[],
  clientId: number,
): Promise<{ values: Map<string, { value: Uint8Array | undefined; version: number }>; locked: number }> {
  const client = connection.client(clientId);
  const values = new Map<string, { value: Uint8Array | undefined; version: number }>();
  let locked = 0;
  try {
    for (const key of keys) {
      const txn = client.begin();
      const read = await txn.readWithVersion(key);
      txn.abandon();
      values.set(key, { value: read.value, version: read.version });
      if (read.locked) locked++;
    }
  } finally {
    client.close();
  }
  return { values, locked };
}
