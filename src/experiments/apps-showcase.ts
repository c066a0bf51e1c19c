/**
 * The showcase's third part: the paper's three applications on the simulated LiquidIO CN2350, each
 * deployed host-only (every actor on the host, paying DPDK packet I/O) and offloaded (iPipe places
 * and migrates), at one packet size, offered the same load — the host cores each keeps busy is the
 * paper's headline (§5: "host cores saved"). A short run of the `ipipe experiment rkv|dt|rta`
 * engine (app-offload.ts); every figure comes from the model and the actors' declared work.
 */

import { hostOf, LIQUIDIO_CN2350 } from '../hw/index.ts';
import { timingFor } from '../platform/sim/hardware-timing.ts';
import { type AppOffloadRow, type OffloadAppName, runAppOffload } from './app-offload.ts';
import { appFor } from './app-offload-apps.ts';

export interface AppsShowcaseRow {
  readonly app: OffloadAppName;
  readonly role: string;
  readonly packetSize: number;
  readonly offeredMops: number;
  readonly hostOnly: AppOffloadRow;
  readonly offloaded: AppOffloadRow;
}

export interface AppsShowcaseResult {
  readonly nic: string;
  readonly seed: number;
  readonly packetSize: number;
  readonly rows: readonly AppsShowcaseRow[];
}

/** Runs each app once per placement at `packetSize` (short windows: a few seconds of wall time each). */
export function runAppsShowcase(options: {
  readonly seed: number;
  readonly packetSize?: number;
  readonly apps?: readonly OffloadAppName[];
  readonly onApp?: (done: number, total: number) => void;
}): AppsShowcaseResult {
  const packetSize = options.packetSize ?? 512;
  const apps = options.apps ?? (['rkv', 'dt', 'rta'] as const);
  const timing = timingFor(LIQUIDIO_CN2350, hostOf(LIQUIDIO_CN2350));
  const rows: AppsShowcaseRow[] = [];
  apps.forEach((name, index) => {
    const result = runAppOffload({
      app: appFor(name),
      timing,
      nic: timing.label,
      packetSizes: [packetSize],
      seed: options.seed,
      durationNs: 10_000_000,
      warmupNs: 3_000_000,
      probeNs: 5_000_000,
    });
    const roles = [...new Set(result.results.map((r) => r.role))];
    for (const role of roles) {
      const hostOnly = result.results.find((r) => r.role === role && r.placement === 'host-only');
      const offloaded = result.results.find((r) => r.role === role && r.placement === 'offloaded');
      if (hostOnly === undefined || offloaded === undefined) continue;
      rows.push({ app: name, role, packetSize, offeredMops: hostOnly.offeredMops, hostOnly, offloaded });
    }
    options.onApp?.(index + 1, apps.length);
  });
  return { nic: timing.label, seed: options.seed, packetSize, rows };
}
