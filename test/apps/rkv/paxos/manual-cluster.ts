/**
 * A hand-driven Paxos group for unit tests: real `PaxosReplica`s with memory storage, a clock the
 * test moves, and a network that holds every message until the test delivers (or drops) it. No
 * randomness: election timeouts come from a fixed fraction per replica, so the test decides who
 * campaigns first. The many-seed randomised runs are the DST's job (harness/sim-cluster.ts); these
 * tests pin single behaviours (election, gap filling, truncation) step by step.
 */

import {
  type ClientReply,
  clientId,
  type KvCommand,
  type KvResult,
  KvStateMachine,
  MemoryPaxosStorage,
  type PaxosInput,
  type PaxosOutputs,
  PaxosReplica,
  type PaxosReplicaConfig,
  type PeerMessage,
  type ReplicaId,
  replicaId,
} from '../../../../src/apps/rkv/paxos/index.ts';

export type Message = PeerMessage<KvCommand, KvResult>;
export type Outputs = PaxosOutputs<KvCommand, KvResult>;

export const MS = 1_000_000;

/** A message in flight from `from` to `to`. */
export interface InFlight {
  readonly from: ReplicaId;
  readonly to: ReplicaId;
  readonly message: Message;
}

export interface ManualClusterOptions {
  readonly replicas: number;
  /** Overrides of the base config (heartbeat 10 ms, election 40–80 ms). */
  readonly config?: Partial<Omit<PaxosReplicaConfig, 'replicaId' | 'replicaCount'>>;
  /**
   * Where in [min, max) each replica's election timeouts fall, by replica (default: replica 0 at
   * 0, the others at 0.9, so replica 0 campaigns first).
   */
  readonly timeoutFraction?: readonly number[];
}

export class ManualCluster {
  readonly replicas: PaxosReplica<KvCommand, KvResult>[] = [];
  readonly storages: MemoryPaxosStorage<KvCommand, KvResult>[] = [];
  readonly machines: KvStateMachine[] = [];
  /** Messages sent and not yet delivered or dropped, in send order. */
  inFlight: InFlight[] = [];
  /** Every client reply any replica produced, with the replica that sent it. */
  readonly replies: { readonly from: ReplicaId; readonly reply: ClientReply<KvResult> }[] = [];
  /** Replicas that are down: they get no input, and messages to them are dropped on delivery. */
  readonly down = new Set<number>();
  nowNs = 0;
  readonly #config: (id: number) => PaxosReplicaConfig;
  readonly #fractions: readonly number[];

  constructor(options: ManualClusterOptions) {
    const count = options.replicas;
    this.#fractions = options.timeoutFraction ?? Array.from({ length: count }, (_, i) => (i === 0 ? 0 : 0.9));
    this.#config = (id) => ({
      replicaId: replicaId(id),
      replicaCount: count,
      heartbeatIntervalNs: 10 * MS,
      electionTimeoutMinNs: 40 * MS,
      electionTimeoutMaxNs: 80 * MS,
      ...options.config,
    });
    for (let id = 0; id < count; id++) {
      this.storages.push(new MemoryPaxosStorage());
      this.machines.push(new KvStateMachine());
      this.replicas.push(this.#make(id));
    }
  }

  #make(id: number): PaxosReplica<KvCommand, KvResult> {
    const fraction = this.#fractions[id] ?? 0.5;
    return new PaxosReplica({
      config: this.#config(id),
      storage: this.storages[id]!,
      stateMachine: this.machines[id]!,
      random: { next: () => fraction },
      nowNs: this.nowNs,
    });
  }

  replica(id: number): PaxosReplica<KvCommand, KvResult> {
    return this.replicas[id]!;
  }

  /** Feeds one input to replica `id` now; its sends go in flight, its replies to `replies`. */
  handle(id: number, input: PaxosInput<KvCommand, KvResult>): Outputs {
    const outputs = this.replica(id).handle(input, this.nowNs);
    for (const { to, message } of outputs.send) this.inFlight.push({ from: replicaId(id), to, message });
    for (const reply of outputs.replies) this.replies.push({ from: replicaId(id), reply });
    return outputs;
  }

  /** Moves the clock to `nowNs` and ticks every replica that is up (in id order). */
  tickAll(nowNs: number): void {
    this.nowNs = Math.max(this.nowNs, nowNs);
    for (let id = 0; id < this.replicas.length; id++)
      if (!this.down.has(id)) this.handle(id, { type: 'tick' });
  }

  /**
   * Delivers in-flight messages in FIFO order (including those sent in response) until none is
   * left. `drop` may refuse a message (it is discarded). Returns how many were delivered.
   */
  deliverAll(drop: (message: InFlight) => boolean = () => false, maxMessages = 10_000): number {
    let delivered = 0;
    while (this.inFlight.length > 0) {
      if (delivered >= maxMessages) throw new Error(`more than ${maxMessages} messages: a message storm`);
      const next = this.inFlight.shift()!;
      if (this.down.has(next.to) || this.down.has(next.from) || drop(next)) continue;
      this.handle(next.to, next.message);
      delivered++;
    }
    return delivered;
  }

  /** Takes (removes and returns) the in-flight messages that match. */
  take(match: (message: InFlight) => boolean): InFlight[] {
    const taken = this.inFlight.filter(match);
    this.inFlight = this.inFlight.filter((message) => !match(message));
    return taken;
  }

  /** Replica 0 (by default) times out first and wins the election over a healthy network. */
  electFirst(): void {
    this.tickAll(40 * MS);
    this.deliverAll();
  }

  /** A client request to replica `id` (client `client`, sequence `seq`). */
  request(id: number, client: number, seq: number, command: KvCommand): Outputs {
    return this.handle(id, { type: 'request', clientId: clientId(client), seq, command });
  }

  /** The crash of a replica: it loses everything not synced, and its in-flight outputs vanish. */
  crash(id: number): void {
    this.down.add(id);
    this.storages[id]!.crash();
  }

  /** A fresh replica on the same storage (and an empty state machine), at the current time. */
  restart(id: number): PaxosReplica<KvCommand, KvResult> {
    this.down.delete(id);
    this.machines[id] = new KvStateMachine();
    this.replicas[id] = this.#make(id);
    return this.replicas[id];
  }

  /** The results replied to (client, seq), from any replica. */
  resultsFor(client: number, seq: number): KvResult[] {
    const results: KvResult[] = [];
    for (const { reply } of this.replies) {
      if (reply.type === 'reply' && reply.clientId === client && reply.seq === seq)
        results.push(reply.result);
    }
    return results;
  }
}

/** Byte-for-byte state of a replica's KV machine, as hex (equal states, equal strings). */
export function stateHex(machine: KvStateMachine): string {
  return Buffer.from(machine.snapshot()).toString('hex');
}
