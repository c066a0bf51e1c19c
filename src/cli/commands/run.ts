/**
 * `ipipe run <module>` (one process: NIC and host domains joined by shared-memory rings) and
 * `ipipe node --role nic|host --channel tcp://host:port <module>` (a split node: the NIC domain in
 * one process — on a DPU's cores — and the host domain in another, joined by TCP). Both serve UDP
 * on the NIC side, expose /metrics, /stats and /migrate over HTTP, and stop gracefully on
 * SIGINT (exit 130) or SIGTERM (exit 0): stop intake, drain, terminate the cores.
 */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { ConfigError, UsageError } from '../../errors.ts';
import { actorId } from '../../ids.ts';
import { connectTcpChannel, listenTcpChannel } from '../../platform/live/channel/tcp-channel.ts';
import { nodeOptionsFor, readClusterFile } from '../../platform/live/cluster/cluster-file.ts';
import { type CatalogEntry, discoverDefinitions } from '../../platform/live/node/actor-catalog.ts';
import { startAdminServer } from '../../platform/live/node/admin-server.ts';
import {
  type IngressMode,
  LiveNode,
  type LiveNodeOptions,
  nicDomainNode,
  startHostDomain,
  startNicDomain,
} from '../../platform/live/node/live-node.ts';
import type { Decision, Domain } from '../../sched/types.ts';
import { refuseFlags } from '../options.ts';
import { paint, table, writeJson, writeOut } from '../output.ts';

export interface RunOptions {
  /** The module whose exported actors the node hosts (absent with `clusterFile`). */
  readonly module: string | undefined;
  /** A cluster file (platform/live/cluster/cluster-file.ts): this process is node `nodeId` of it. */
  readonly clusterFile?: string | undefined;
  readonly nodeId?: number | undefined;
  /** Undefined: 2, or 1 with `ingress` 'core' (the node's own defaults). */
  readonly nicCores: number | undefined;
  readonly ingress: IngressMode;
  readonly hostCores: number;
  readonly port: number;
  readonly address: string;
  readonly metricsPort: number | undefined;
  readonly watchdogMs: number;
  readonly placement: Readonly<Record<string, Domain>>;
  readonly json: boolean;
  /** The flags typed on the command line (to refuse those this mode would ignore). */
  readonly given?: readonly string[];
}

/** Why a user's actor module would not load, as a usage error with the likely fix. */
function moduleLoadError(module: string, error: unknown): UsageError {
  const code = (error as { code?: unknown } | null)?.code;
  const first = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  if (code === 'ERR_REQUIRE_CYCLE_MODULE' || code === 'ERR_REQUIRE_ESM') {
    return new UsageError(
      `cannot load ${module}: it was loaded as CommonJS (${code}); put it in a package whose package.json ` +
        'says "type": "module", or name it .mts',
    );
  }
  return new UsageError(`cannot load ${module}: ${first} (fix the module, or give another path)`);
}

/** The catalog of every actor definition `module` exports, ids 1, 2, … in the export names' alphabetical order. */
export async function catalogOf(module: string): Promise<CatalogEntry[]> {
  const path = resolve(module);
  if (!existsSync(path))
    throw new UsageError(`no such module: ${module} (give the path of a file that exports actors)`);
  let found: Awaited<ReturnType<typeof discoverDefinitions>>;
  try {
    found = await discoverDefinitions(path);
  } catch (error) {
    throw moduleLoadError(module, error);
  }
  if (found.length === 0 && found.lookalikes !== undefined) {
    throw new UsageError(
      `${module} exports ${found.lookalikes.join(', ')}, shaped like actor definitions but made by another ` +
        "copy of ipipe's actor API — most often the file was loaded as CommonJS: put it in a package whose " +
        'package.json says "type": "module" (or name it .mts), and import defineActor from the same ipipe',
    );
  }
  if (found.length === 0) {
    throw new UsageError(`${module} exports no actor definitions: export what defineActor returns`);
  }
  return found.map(({ exportName, definition }, index) => ({
    id: actorId(index + 1),
    name: definition.name,
    module: path,
    exportName,
  }));
}

/** `name=nic|host`, repeatable. */
export function parsePlacement(value: string, previous: Record<string, Domain> = {}): Record<string, Domain> {
  const match = /^([a-z][a-z0-9-]*)=(nic|host)$/.exec(value.trim());
  if (!match) throw new UsageError(`--place must look like <actor>=nic or <actor>=host, got "${value}"`);
  return { ...previous, [match[1] as string]: match[2] as Domain };
}

function nodeOptions(options: RunOptions, catalog: CatalogEntry[]): LiveNodeOptions {
  for (const name of Object.keys(options.placement)) {
    if (!catalog.some((entry) => entry.name === name)) {
      throw new UsageError(
        `--place ${name}=…: the module has no actor named ${name} (it has ${catalog.map((e) => e.name).join(', ')})`,
      );
    }
  }
  return {
    catalog,
    nicCores: options.nicCores ?? (options.ingress === 'core' ? 1 : 2),
    ingress: options.ingress,
    hostCores: options.hostCores,
    port: options.port,
    address: options.address,
    watchdogMs: options.watchdogMs,
    placement: options.placement,
  };
}

function metricsPortError(options: RunOptions, error: unknown): ConfigError {
  return new ConfigError(
    'metricsPort',
    `cannot listen on ${options.address}:${options.metricsPort} for /metrics (${(error as Error).message}); ` +
      'pick another --metrics-port',
  );
}

/** Resolves with the exit code once a signal stopped the node. */
function untilSignal(stop: () => Promise<void>): Promise<number> {
  return new Promise((resolveExit) => {
    let stopping = false;
    const onSignal = (signal: NodeJS.Signals) => {
      if (stopping) return;
      stopping = true;
      process.stderr.write(`ipipe: ${signal}: stopping intake, draining, stopping cores…\n`);
      stop().then(
        () => resolveExit(signal === 'SIGINT' ? 130 : 0),
        (error: unknown) => {
          process.stderr.write(`ipipe: stop failed: ${String(error)}\n`);
          resolveExit(1);
        },
      );
    };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
  });
}

/** The node options and the actors this process hosts, from a module or from a cluster file. */
async function liveSetup(options: RunOptions): Promise<{ live: LiveNodeOptions; hosted: CatalogEntry[] }> {
  const given = options.given ?? [];
  if (options.clusterFile === undefined) {
    refuseFlags(
      given,
      ['--node-id'],
      'a node without --cluster',
      'give --cluster <file> too (--node-id picks one of its nodes), or drop --node-id',
    );
    if (options.module === undefined) {
      throw new UsageError('give the module whose actors to run, or --cluster <file> with --node-id <n>');
    }
    const catalog = await catalogOf(options.module);
    return { live: nodeOptions(options, catalog), hosted: catalog };
  }
  if (options.module !== undefined) {
    throw new UsageError(
      'give either a module or --cluster <file>, not both (the cluster file names the modules)',
    );
  }
  if (options.nodeId === undefined)
    throw new UsageError('--cluster needs --node-id <n>: which node of the file this is');
  refuseFlags(
    given,
    ['--port', '--address'],
    'a node of a --cluster file',
    "the file sets each node's address and port: change them there",
  );
  const spec = readClusterFile(options.clusterFile);
  const fromFile = nodeOptionsFor(spec, options.nodeId);
  refuseFlags(
    given,
    [
      ...(fromFile.nicCores === undefined ? [] : ['--nic-cores']),
      ...(fromFile.hostCores === undefined ? [] : ['--host-cores']),
    ],
    `node ${options.nodeId} of ${options.clusterFile}`,
    'the file sets its cores: change them there, or remove them from the file',
  );
  const live: LiveNodeOptions = {
    ...fromFile,
    nicCores: fromFile.nicCores ?? options.nicCores ?? (options.ingress === 'core' ? 1 : 2),
    ingress: options.ingress,
    hostCores: fromFile.hostCores ?? options.hostCores,
    watchdogMs: options.watchdogMs,
    placement: { ...fromFile.placement, ...options.placement },
  };
  return { live, hosted: fromFile.catalog.filter((entry) => entry.node === options.nodeId) };
}

export async function runCommand(options: RunOptions): Promise<number> {
  const { live, hosted: catalog } = await liveSetup(options);
  const node = await LiveNode.start(live);
  node.nic.onDecision = printDecision;
  let admin: Awaited<ReturnType<typeof startAdminServer>> | undefined;
  if (options.metricsPort !== undefined) {
    try {
      admin = await startAdminServer(node, options.metricsPort, options.address);
    } catch (error) {
      // The node already serves (threads, a socket): stop it, or the process would never exit.
      await node.stop();
      throw metricsPortError(options, error);
    }
  }
  const banner = {
    schemaVersion: 1,
    udp: node.address,
    nodeId: live.nodeId ?? 0,
    pid: process.pid,
    admin: admin ? `http://${admin.address}:${admin.port}` : null,
    nicCores: live.nicCores,
    hostCores: live.hostCores,
    ingress: node.ingress,
    actors: catalog.map((entry) => ({ id: entry.id, name: entry.name, domain: node.domainOf(entry.id) })),
  };
  if (options.json) writeJson(banner);
  else {
    writeOut(paint('bold', `ipipe node serving UDP ${node.address.address}:${node.address.port}`));
    if (admin)
      writeOut(
        `metrics and admin: ${banner.admin}/metrics · /stats · POST /migrate?actor=<name>&to=nic|host`,
      );
    writeOut(
      `${live.nicCores} NIC cores, ${live.hostCores} host cores (worker threads)` +
        (node.ingress === 'core' ? ', NIC core 0 owns the UDP socket (--ingress core)' : '') +
        ' · Ctrl-C to stop',
    );
    writeOut(
      table(
        ['id', 'actor', 'domain'],
        banner.actors.map((a) => [a.id, a.name, a.domain]),
      ),
    );
  }
  return untilSignal(async () => {
    await admin?.close();
    await node.stop();
  });
}

/** One stderr line per scheduler decision, with the numbers that made it (a node's own log). */
function printDecision(decision: Decision): void {
  process.stderr.write(`ipipe: scheduler: ${decision.why}\n`);
}

export interface NodeRoleOptions extends RunOptions {
  readonly role: 'nic' | 'host';
  readonly channel: { readonly host: string; readonly port: number };
}

/** `tcp://host:port`. */
export function parseChannelAddress(value: string, flag = '--channel'): { host: string; port: number } {
  const match = /^tcp:\/\/([^:/]+):(\d{1,5})$/.exec(value.trim());
  const port = Number(match?.[2]);
  if (!match || !(port >= 1 && port <= 65_535)) {
    throw new UsageError(`${flag} must look like tcp://127.0.0.1:7000, got "${value}"`);
  }
  return { host: match[1] as string, port };
}

/**
 * The channel address of `ipipe node`, given as `--channel` (the README's name) or `--host-channel`
 * (issue 4's: `ipipe node --role nic --host-channel tcp://…`). Both are accepted so that either
 * document's command line works; exactly one must be given.
 */
export function pickChannelAddress(
  channel: { host: string; port: number } | undefined,
  hostChannel: { host: string; port: number } | undefined,
): { host: string; port: number } {
  if (channel !== undefined && hostChannel !== undefined) {
    throw new UsageError('--channel and --host-channel name the same address: give one of them');
  }
  const picked = channel ?? hostChannel;
  if (picked === undefined) {
    throw new UsageError(
      'give the NIC↔host channel address: --channel tcp://host:port (the --role nic process listens there, the --role host process connects)',
    );
  }
  return picked;
}

/**
 * Options of `ipipe node` that only the other role uses: the host domain serves no UDP and no
 * metrics (the NIC domain does), and the NIC domain runs no host cores. Given to the wrong role
 * they would be ignored, so they are refused.
 */
const OTHER_ROLE_OPTIONS: Readonly<Record<'nic' | 'host', readonly string[]>> = {
  nic: ['--host-cores'],
  host: ['--nic-cores', '--port', '--address', '--metrics-port'],
};

export async function nodeRoleCommand(
  options: NodeRoleOptions,
  given: readonly string[] = [],
): Promise<number> {
  if (options.module === undefined) throw new UsageError('ipipe node needs the module whose actors it hosts');
  if (options.role === 'host' && options.ingress === 'core') {
    // The host domain owns no socket: the option belongs to the NIC side, where it would be lost.
    throw new UsageError(
      '--ingress core is for the NIC domain (--role nic), which owns the UDP socket; drop it from --role host',
    );
  }
  const misplaced = OTHER_ROLE_OPTIONS[options.role].filter((flag) => given.includes(flag));
  if (misplaced.length > 0) {
    const other = options.role === 'nic' ? 'host' : 'nic';
    throw new UsageError(
      `${misplaced.join(', ')} ${misplaced.length === 1 ? 'belongs' : 'belong'} to the --role ${other} process ` +
        `(the ${other === 'nic' ? 'NIC domain serves UDP and /metrics and runs the NIC cores' : 'host domain runs the host cores'}): ` +
        `give ${misplaced.length === 1 ? 'it' : 'them'} to that process instead`,
    );
  }
  const catalog = await catalogOf(options.module);
  const live = nodeOptions(options, catalog);
  const channelUrl = `tcp://${options.channel.host}:${options.channel.port}`;
  if (options.role === 'nic') {
    const listener = await listenTcpChannel({ host: options.channel.host, port: options.channel.port });
    // Until the host connects nothing is served and nothing needs draining, but a signal must still
    // end the process with the documented code (130 / 0), not the default death (SIGTERM: 143).
    let onSignal: ((signal: NodeJS.Signals) => void) | undefined;
    const signalled = new Promise<NodeJS.Signals>((resolve) => {
      onSignal = resolve;
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
    });
    // Said only now: a signal that arrives before Node has a listener for it kills the process.
    process.stderr.write(
      `ipipe: NIC domain waiting for the host domain on tcp://${listener.host}:${listener.port}\n`,
    );
    const accepting = listener.accept();
    accepting.catch(() => undefined); // rejected by close() below when a signal came first
    const first = await Promise.race([accepting, signalled]);
    if (onSignal !== undefined) {
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
    }
    await listener.close();
    if (typeof first === 'string') {
      process.stderr.write(
        `ipipe: ${first} while waiting for the host domain: nothing served yet, exiting\n`,
      );
      return first === 'SIGINT' ? 130 : 0;
    }
    const channel = first;
    const nic = await startNicDomain(live, channel);
    nic.onDecision = printDecision;
    nic.onHostLost = () => {
      const onHost = catalog.filter((entry) => nic.domainOf(entry.id) === 'host').map((entry) => entry.name);
      process.stderr.write(
        `ipipe: the host domain is gone (the channel ${channelUrl} closed: its process ended or the link failed). ` +
          `Requests for actors on the host (${onHost.length > 0 ? onHost.join(', ') : 'none now'}) are refused ` +
          'with IPIPE_ERR_NODE_HOST_UNREACHABLE and counted in /stats drops as host-unreachable; NIC actors ' +
          'keep serving. This process does not reconnect: restart it, then the --role host process.\n',
      );
    };
    let admin: Awaited<ReturnType<typeof startAdminServer>> | undefined;
    if (options.metricsPort !== undefined) {
      try {
        admin = await startAdminServer(nicDomainNode(nic), options.metricsPort, options.address);
      } catch (error) {
        nic.beginStop();
        await nic.stop();
        await channel.close();
        throw metricsPortError(options, error);
      }
    }
    const banner = {
      schemaVersion: 1,
      role: 'nic' as const,
      channel: channelUrl,
      udp: nic.address,
      pid: process.pid,
      admin: admin ? `http://${admin.address}:${admin.port}` : null,
      nicCores: options.nicCores,
      actors: catalog.map((entry) => ({ id: entry.id, name: entry.name, domain: nic.domainOf(entry.id) })),
    };
    if (options.json) writeJson(banner);
    else {
      writeOut(
        `ipipe NIC domain serving UDP ${nic.address.address}:${nic.address.port} (host domain over TCP)`,
      );
      if (admin)
        writeOut(
          `metrics and admin: ${banner.admin}/metrics · /stats · POST /migrate?actor=<name>&to=nic|host`,
        );
    }
    return untilSignal(async () => {
      await admin?.close();
      nic.beginStop();
      await nic.stop();
      await channel.close();
    });
  }
  const channel = await connectTcpChannel({ host: options.channel.host, port: options.channel.port });
  const host = await startHostDomain(live, channel);
  if (options.json)
    writeJson({
      schemaVersion: 1,
      role: 'host' as const,
      channel: channelUrl,
      pid: process.pid,
      hostCores: options.hostCores,
      actors: catalog.map((entry) => ({ id: entry.id, name: entry.name })),
    });
  else writeOut(`ipipe host domain connected to the NIC domain at ${channelUrl}`);
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= host.stop().then(() => channel.close());
    return stopped;
  };
  // Without its NIC domain a host domain is unreachable (the NIC side owns the socket) and its
  // actors get nothing more: it says so and ends, so a supervisor restarts the pair, rather than
  // sitting silent (it used to, until a signal).
  const nicLost = new Promise<number>((resolveExit) => {
    host.onNicLost = () => {
      process.stderr.write(
        `ipipe: the NIC domain is gone (the channel ${channelUrl} closed: its process ended or the link failed). ` +
          'Nothing reaches this host domain without it: stopping its cores and exiting with code 1. ' +
          'Restart the --role nic process, then this one.\n',
      );
      stop()
        .catch((error: unknown) => process.stderr.write(`ipipe: stop failed: ${String(error)}\n`))
        .then(() => resolveExit(1));
    };
    if (host.nicLost) host.onNicLost();
  });
  return Promise.race([untilSignal(stop), nicLost]);
}

/** `ipipe migrate`: asks a running node's admin endpoint to move an actor. */
export async function migrateCommand(options: {
  admin: string;
  actor: string;
  to: Domain;
  json: boolean;
}): Promise<number> {
  let url: URL;
  try {
    url = new URL('/migrate', options.admin);
  } catch {
    throw new UsageError(
      `--admin must be the node's admin URL, e.g. http://127.0.0.1:9464 (its --metrics-port), got "${options.admin}"`,
    );
  }
  url.searchParams.set('actor', options.actor);
  url.searchParams.set('to', options.to);
  let response: Response;
  try {
    // A migration takes milliseconds (bench/RESULTS.md: 32 MiB in ~10 ms); 10 s without an answer
    // means --admin names something other than a node's admin endpoint.
    response = await fetch(url, { method: 'POST', signal: AbortSignal.timeout(10_000) });
  } catch (error) {
    const why =
      error instanceof Error && error.name === 'TimeoutError' ? 'no answer within 10 s' : String(error);
    process.stderr.write(
      `ipipe: cannot reach ${options.admin}: ${why} (is the node running with --metrics-port?)\n`,
    );
    return 3;
  }
  let body: { migration?: { phasesMs: Record<string, number>; stateBytes: number }; error?: string };
  try {
    body = (await response.json()) as typeof body;
  } catch {
    process.stderr.write(
      `ipipe: ${options.admin} answered ${response.status} but not as an ipipe node's admin endpoint ` +
        '(is --admin the port the node was started with as --metrics-port?)\n',
    );
    return 3;
  }
  if (!response.ok || !body.migration) {
    process.stderr.write(`ipipe: migration refused: ${body.error ?? response.statusText}\n`);
    return response.status === 404 || response.status === 400 ? 2 : 1;
  }
  if (options.json) writeJson(body);
  else {
    const p = body.migration.phasesMs;
    writeOut(
      `${options.actor} → ${options.to}: ${body.migration.stateBytes} bytes of DMOs; prepare ${p['prepare']?.toFixed(2)} ms, ` +
        `ready ${p['ready']?.toFixed(2)} ms, gone ${p['gone']?.toFixed(2)} ms, clean ${p['clean']?.toFixed(2)} ms`,
    );
  }
  return 0;
}
