/**
 * The client process of the echo-cost experiment (echo-cost.ts): closed-loop load against each
 * server in turn, round after round, one JSON line per measured run on stdout. A process of its
 * own so that the client never shares an event loop or a CPU queue slot with the servers it
 * measures (they all live in the parent; only the one being measured is busy).
 *
 * Invoked as `node [--import tsx] echo-cost-client.(ts|js) '<EchoCostClientSpec as JSON>'`.
 */

import { pathToFileURL } from 'node:url';
import { runLoad } from '../platform/live/net/load.ts';

/** One server the client measures. */
export interface EchoCostTarget {
  readonly kind: string;
  readonly port: number;
  /** The request payload, hex: the echo actor's encoded message for a node, raw bytes otherwise. */
  readonly payloadHex: string;
  /** A protocol-less echo sends the request back as it came: accept it as the reply. */
  readonly reflected: boolean;
}

export interface EchoCostClientSpec {
  readonly targets: readonly EchoCostTarget[];
  readonly rounds: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly outstanding: number;
  readonly seed: number;
}

/** One measured run, as the client prints it. */
export interface EchoCostRun {
  readonly round: number;
  readonly kind: string;
  readonly throughputPerSec: number;
  readonly p50Us: number;
  readonly p99Us: number;
  readonly answered: number;
  readonly timeouts: number;
}

async function main(spec: EchoCostClientSpec): Promise<void> {
  for (let round = 0; round < spec.rounds; round++) {
    // Rotated each round so that a slow spell of the machine does not always hit the same server.
    const order = spec.targets.map(
      (_, i) => spec.targets[(i + round) % spec.targets.length] as EchoCostTarget,
    );
    for (const target of order) {
      const payload = Uint8Array.from(Buffer.from(target.payloadHex, 'hex'));
      const result = await runLoad({
        target: `127.0.0.1:${target.port}`,
        actor: 1,
        mode: { kind: 'closed', outstanding: spec.outstanding },
        makePayload: () => payload,
        durationMs: spec.durationMs,
        warmupMs: spec.warmupMs,
        seed: spec.seed + round,
        timeoutMs: 1_000,
        acceptReflectedRequests: target.reflected,
      });
      const run: EchoCostRun = {
        round,
        kind: target.kind,
        throughputPerSec: result.throughputPerSec,
        p50Us: result.latency?.p50Us ?? Number.NaN,
        p99Us: result.latency?.p99Us ?? Number.NaN,
        answered: result.answered,
        timeouts: result.timeouts,
      };
      process.stdout.write(`${JSON.stringify(run)}\n`);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await main(JSON.parse(process.argv[2] ?? '{}') as EchoCostClientSpec);
}
