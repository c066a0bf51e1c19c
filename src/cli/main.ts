#!/usr/bin/env node
/**
 * The `ipipe` command line: parses and validates arguments, calls the library, prints. Exit codes:
 * 0 ok, 1 a check failed, 2 usage or configuration error, 3 environment problem (STYLE.md).
 */

import { pathToFileURL } from 'node:url';
import { Command, CommanderError, Option, type OptionValues } from '@commander-js/extra-typings';
import { IpipeError, UsageError } from '../errors.ts';
import { getProfile, knownProfileNames } from '../hw/index.ts';
import { freshSeed } from '../random.ts';
import { characterizeCommand } from './commands/characterize.ts';
import { addClusterCommands } from './commands/cluster.ts';
import { actorLoadCommand } from './commands/cluster-actors.ts';
import { addAppExperimentCommands } from './commands/experiment-apps.ts';
import { schedulerExperimentCommand } from './commands/experiment-scheduler.ts';
import {
  LOAD_OPTION_HELP,
  loadCommand,
  parseLoadOptions,
  type RawLoadOptions,
  resolveLoadRequest,
} from './commands/load.ts';
import {
  migrateCommand,
  nodeRoleCommand,
  parseChannelAddress,
  parsePlacement,
  pickChannelAddress,
  runCommand,
} from './commands/run.ts';
import { showcaseCommand } from './commands/showcase.ts';
import { walkthroughCommand } from './commands/walkthrough.ts';
import {
  givenFlags,
  parseAddress,
  parseChoice,
  parseChoices,
  parseDuration,
  parseDurationWithin,
  parseFraction,
  parseIntegerIn,
  parseLoads,
  parseSeed,
  refuseFlags,
  resolveNic,
} from './options.ts';
import { table, writeJson, writeOut } from './output.ts';

export const EXIT_OK = 0;
export const EXIT_CHECK_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_ENVIRONMENT = 3;

/** The exit code an action asks for (commands that run until a signal, or report a failed check). */
let actionExit = EXIT_OK;

/**
 * `characterize --point-duration`. Below 200 µs the results are not the model's: measured on the
 * four built-in NICs (seeds 1 and 2) against 2 ms points, `coresForLineRate` is exact from 100 µs
 * on every profile (CN2360 from 50 µs) but the headroom bisection is within 1% only from 200 µs on
 * the CN2350 (150 µs: 12.5 µs instead of 14.5 at 1500 B) and from 100 µs on the others; shorter
 * points report "never" for sizes that do reach line rate (docs/experiments.md). The run time
 * grows in proportion (2 ms points took 7 s on the CN2350 and 63 s on the BlueField on a loaded
 * 2-core machine), so beyond 100 ms a run takes from many minutes to hours for figures that no
 * longer change.
 */
const POINT_DURATION_BOUNDS = {
  minNs: 200_000,
  maxNs: 100_000_000,
  whyMin:
    'shorter points are too few packets for the line-rate and headroom searches (results drift from the model: cores "never", headroom off by >1%)',
  whyMax:
    'the run time grows in proportion (2ms points take seconds to minutes; 100ms, 50 times that) and the figures are the same from 200us on',
} as const;

function parsePort(option: string): (value: string) => number {
  return parseIntegerIn(option, 0, 65_535);
}

function buildProgram(): Command {
  const program = new Command('ipipe')
    .description(
      'Offload distributed applications onto SmartNICs: actors, DMOs, the hybrid scheduler, and a SmartNIC simulator.',
    )
    .version('0.1.0')
    .showHelpAfterError('(run with --help for usage)')
    .exitOverride();

  program
    .command('showcase')
    .description(
      'iPipe end to end: the scheduler walkthrough on a simulated SmartNIC, then the same actors on a live node',
    )
    .option('--seed <n>', 'seed of every random choice (printed; same seed, same run)', parseSeed)
    .option('--simulated-only', 'skip the live half (no threads or sockets)')
    .option('--json', 'print one JSON document instead of text')
    .action(async (options) => {
      const whole = await showcaseCommand({
        seed: options.seed ?? freshSeed(),
        json: options.json === true,
        simulatedOnly: options.simulatedOnly === true,
      });
      if (!whole) actionExit = EXIT_CHECK_FAILED;
    });

  const walkthrough = program.command('walkthrough').description('scripted, explained runs of one mechanism');
  walkthrough
    .command('scheduler')
    .description(
      'synthetic actors with Table 3 task costs under phased load; prints every scheduler decision and why',
    )
    .option('--seed <n>', 'seed of every random choice (printed; same seed, same run)', parseSeed)
    .option('--json', 'print one JSON document instead of text')
    .action((options) => {
      walkthroughCommand({ seed: options.seed ?? freshSeed(), json: options.json === true });
    });

  program
    .command('profiles')
    .description(
      'list the built-in hardware profiles (NICs and hosts); with a name, print that profile whole, as a JSON profile file to copy and edit',
    )
    .argument(
      '[name]',
      'a built-in profile to print whole (save it, edit it, pass the file as --nic or --host)',
    )
    .option('--json', 'print one JSON document instead of text')
    .action((name, options) => {
      if (name !== undefined) {
        // The whole profile, every field: the starting point for someone's own card. Printed as
        // the file format itself (so `> my-card.json` is a valid --nic file); --json wraps it.
        if (!knownProfileNames().includes(name)) {
          throw new UsageError(
            `profiles: unknown profile "${name}"; known profiles: ${knownProfileNames().join(', ')}`,
          );
        }
        const profile = getProfile(name);
        if (options.json === true) writeJson({ schemaVersion: 1, profile });
        else writeJson(profile);
        return;
      }
      const profiles = knownProfileNames().map((name) => {
        const p = getProfile(name);
        return p.kind === 'nic'
          ? {
              name,
              kind: p.kind,
              description: p.description,
              cores: p.cores.count,
              linkGbps: p.link.linkGbps,
              placement: p.placement,
              host: p.host,
            }
          : { name, kind: p.kind, description: p.description, cores: p.cores.count };
      });
      if (options.json === true) writeJson({ schemaVersion: 1, profiles });
      else
        writeOut(
          table(
            ['profile', 'kind', 'cores', 'link', 'placement', 'description'],
            profiles.map((p) => [
              p.name,
              p.kind,
              p.cores,
              'linkGbps' in p ? `${p.linkGbps} GbE` : '',
              'placement' in p ? p.placement : '',
              p.description,
            ]),
          ),
        );
    });

  program
    .command('characterize')
    .description(
      "the paper's SmartNIC characterization (Figs 2–10) on the simulated NIC, beside the published numbers",
    )
    .requiredOption(
      '--nic <profile>',
      'a built-in NIC profile (see `ipipe profiles`) or a path to a JSON profile',
    )
    .option(
      '--host <profile>',
      'the server the NIC sits in: a built-in host profile or a path to a JSON one (default: the one the NIC profile names)',
    )
    .option('--seed <n>', 'seed of every random choice (printed; same seed, same run)', parseSeed)
    .addOption(
      new Option('--point-duration <time>', 'simulated traffic per measured point (200us to 100ms)')
        .argParser(parseDurationWithin('--point-duration', POINT_DURATION_BOUNDS))
        .default(1_000_000, '1ms'),
    )
    .addOption(
      // The other experiments take --duration; here the simulated time is per measured point, so a
      // --duration (the word for it) is pointed at the option that means it.
      new Option('--duration <time>').hideHelp().argParser((value: string): number => {
        throw new UsageError(
          `characterize has no --duration: its simulated time is set per measured point with --point-duration (200us to 100ms, default 1ms), e.g. --point-duration ${value}`,
        );
      }),
    )
    .option('--out <dir>', 'where to write JSON, CSV and SVG charts', 'out')
    .option('--json', 'print one JSON document instead of text')
    .action(async (options) => {
      await characterizeCommand({
        target: resolveNic(options.nic, options.host),
        seed: options.seed ?? freshSeed(),
        pointNs: options.pointDuration,
        outDir: options.out,
        json: options.json === true,
      });
    });

  const experiment = program
    .command('experiment')
    .description("the paper's experiments on the simulated platform");
  experiment
    .command('scheduler')
    .description('FCFS-only, DRR-only and hybrid scheduling under Poisson load: p50/p99 per load')
    .requiredOption(
      '--nic <profile>',
      'a built-in NIC profile (see `ipipe profiles`) or a path to a JSON profile',
    )
    .option(
      '--host <profile>',
      'the server the NIC sits in: a built-in host profile or a path to a JSON one (default: the one the NIC profile names)',
    )
    .addOption(
      new Option('--dist <kind>', "request cost distribution (the paper's, per NIC)")
        .choices(['exponential', 'bimodal'] as const)
        .default('exponential' as const),
    )
    .option(
      '--bimodal-share <fraction>',
      'share of requests in the first (cheaper) bimodal mode; the paper does not publish it',
      (v) => parseFraction('--bimodal-share', v),
      0.5,
    )
    .addOption(
      new Option('--loads <list>', 'offered loads as fractions of NIC capacity')
        .argParser(parseLoads)
        .default([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9], '0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9'),
    )
    .addOption(
      new Option('--schedulers <list>', 'which schedulers to run')
        .argParser(parseChoices('--schedulers', ['fcfs', 'drr', 'hybrid'] as const))
        .default(['fcfs', 'drr', 'hybrid'] as ('fcfs' | 'drr' | 'hybrid')[], 'fcfs,drr,hybrid'),
    )
    .addOption(
      new Option('--duration <time>', 'simulated time per point, after the warm-up')
        .argParser(parseDuration('--duration'))
        .default(200_000_000, '200ms'),
    )
    .addOption(
      new Option('--warmup <time>', 'simulated warm-up per point (not measured)')
        .argParser(parseDuration('--warmup'))
        .default(20_000_000, '20ms'),
    )
    .option('--actors <n>', 'actors sharing the traffic', parseIntegerIn('--actors', 1, 64), 8)
    .option('--packet-size <bytes>', 'request frame size', parseIntegerIn('--packet-size', 80, 9000), 512)
    .option('--seed <n>', 'seed of every random choice (printed; same seed, same run)', parseSeed)
    .option('--out <dir>', 'where to write JSON, CSV and SVG charts', 'out')
    .option('--json', 'print one JSON document instead of text')
    .action(async (options, command) => {
      if (options.dist === 'exponential') {
        refuseFlags(
          givenFlags(command),
          ['--bimodal-share'],
          '--dist exponential',
          'it is the share of the bimodal mix: add --dist bimodal',
        );
      }
      await schedulerExperimentCommand({
        target: resolveNic(options.nic, options.host),
        dist: options.dist,
        bimodalShare: options.bimodalShare,
        loads: options.loads,
        schedulers: options.schedulers,
        seed: options.seed ?? freshSeed(),
        durationNs: options.duration,
        warmupNs: options.warmup,
        actors: options.actors,
        packetBytes: options.packetSize,
        outDir: options.out,
        json: options.json === true,
      });
    });

  addAppExperimentCommands(experiment);

  const liveOptions = <Args extends [string] | [string | undefined], Opts extends OptionValues>(
    command: Command<Args, Opts>,
  ) =>
    command
      .addOption(
        new Option('--nic-cores <n>', 'NIC domain cores (worker threads)')
          .argParser(parseIntegerIn('--nic-cores', 1, 64))
          .default(undefined, '2; 1 with --ingress core'),
      )
      .addOption(
        new Option(
          '--ingress <mode>',
          'which thread owns the UDP socket: controller (main thread, hands requests to NIC cores) or core (NIC core 0 receives, runs and answers itself; one NIC core, no cluster)',
        )
          .argParser(parseChoice('--ingress', ['controller', 'core'] as const))
          .default('controller' as const),
      )
      .option(
        '--host-cores <n>',
        'host domain cores (worker threads)',
        parseIntegerIn('--host-cores', 1, 64),
        2,
      )
      .option('--port <port>', 'UDP port the NIC domain serves (0: any free port)', parsePort('--port'), 9000)
      .option('--address <ip>', 'address to bind', parseAddress('--address'), '127.0.0.1')
      .option(
        '--metrics-port <port>',
        'HTTP port for /metrics, /stats and /migrate (0: any free port)',
        parsePort('--metrics-port'),
      )
      .addOption(
        new Option('--watchdog <time>', 'a handler running longer is stopped and its actor deregistered')
          .argParser(parseDuration('--watchdog'))
          .default(1_000_000_000, '1s'),
      )
      .addOption(
        new Option('--place <actor=domain>', 'start an actor on nic or host (repeatable)')
          .argParser(parsePlacement)
          .default({}, 'none'),
      )
      .option('--json', 'print the start-up banner as one JSON document');

  liveOptions(
    program
      .command('run')
      .description(
        'start a live node hosting every actor the module exports (NIC and host domains in this process), or one node of a cluster file',
      )
      .argument('[module]', 'a .ts or .js file exporting actor definitions')
      .option('--cluster <file>', 'a cluster file (nodes and where each actor runs): run one of its nodes')
      .option(
        '--node-id <n>',
        'with --cluster: which node of the file this process is',
        parseIntegerIn('--node-id', 0, 65_535),
      ),
  ).action(async (module, options, command) => {
    actionExit = await runCommand({
      given: givenFlags(command),
      module,
      clusterFile: options.cluster,
      nodeId: options.nodeId,
      nicCores: options.nicCores,
      ingress: options.ingress,
      hostCores: options.hostCores,
      port: options.port,
      address: options.address,
      metricsPort: options.metricsPort,
      watchdogMs: options.watchdog / 1e6,
      placement: options.place,
      json: options.json === true,
    });
  });

  liveOptions(
    program
      .command('node')
      .description(
        'one domain of a split node: --role nic (e.g. on a DPU) listens on --channel; --role host connects to it',
      )
      .argument('<module>', 'a .ts or .js file exporting actor definitions (the same in both processes)')
      .requiredOption('--role <role>', 'nic or host', parseChoice('--role', ['nic', 'host'] as const))
      .option('--channel <tcp://host:port>', 'the NIC↔host channel address (required)', (value) =>
        parseChannelAddress(value),
      )
      .option('--host-channel <tcp://host:port>', 'the same as --channel (the name issue 4 uses)', (value) =>
        parseChannelAddress(value, '--host-channel'),
      ),
  ).action(async (module, options, command) => {
    const given = givenFlags(command);
    actionExit = await nodeRoleCommand(
      {
        module,
        role: options.role,
        channel: pickChannelAddress(options.channel, options.hostChannel),
        nicCores: options.nicCores,
        ingress: options.ingress,
        hostCores: options.hostCores,
        port: options.port,
        address: options.address,
        metricsPort: options.metricsPort,
        watchdogMs: options.watchdog / 1e6,
        placement: options.place,
        json: options.json === true,
      },
      given,
    );
  });

  program
    .command('migrate')
    .description(
      "move an actor of a running node between its NIC and host domains (the node's --metrics-port)",
    )
    .requiredOption('--admin <url>', 'the node admin endpoint, e.g. http://127.0.0.1:9464')
    .requiredOption('--actor <name>', 'the actor to move')
    .requiredOption('--to <domain>', 'nic or host', parseChoice('--to', ['nic', 'host'] as const))
    .option('--json', 'print one JSON document instead of text')
    .action(async (options) => {
      actionExit = await migrateCommand({
        admin: options.admin,
        actor: options.actor,
        to: options.to,
        json: options.json === true,
      });
    });

  const load = program
    .command('load')
    .description('drive a node (or any ipipe UDP server) with open- or closed-loop load');
  for (const option of LOAD_OPTION_HELP) load.option(option.flags, option.description);
  load.action(async (options) => {
    const raw = options as unknown as RawLoadOptions;
    if (raw.app !== undefined || raw.dataDir !== undefined) {
      actionExit = await actorLoadCommand(raw, freshSeed);
      return;
    }
    const result = await loadCommand(await resolveLoadRequest(parseLoadOptions(raw, freshSeed), raw));
    if (result.answered === 0) actionExit = EXIT_CHECK_FAILED;
  });

  addClusterCommands(program as unknown as Command, (code) => {
    actionExit = code;
  });

  refuseRepeatedOptions(program as unknown as Command);
  return program as unknown as Command;
}

/** Options that add to their value each time they are given. */
const REPEATABLE_FLAGS: ReadonlySet<string> = new Set(['--place']);

/**
 * A single-value option given twice (`--seed 1 … --seed 2`) would keep the last value and drop
 * the first without a word: refuse it. A flag without a value (`--json`) given twice means the
 * same as once and passes.
 */
function refuseRepeatedOptions(command: Command): void {
  for (const option of command.options) {
    const flag = option.long;
    if (flag === undefined || REPEATABLE_FLAGS.has(flag) || !(option.required || option.optional)) continue;
    let first: string | undefined;
    command.on(`option:${option.name()}`, (value: unknown) => {
      const text = String(value);
      if (first === undefined) {
        first = text;
        return;
      }
      throw new UsageError(`${flag} given twice ("${first}", then "${text}"): give it once`);
    });
  }
  for (const sub of command.commands) refuseRepeatedOptions(sub as Command);
}

/**
 * Set when a command ended by an error rather than by returning: it may have left threads or
 * sockets open (a node that started before its admin port failed), which must not keep the
 * process alive.
 */
let abortedByError = false;

/** Hints for the operating-system errors a user's input most often causes. */
const SYSTEM_ERROR_HINTS: Readonly<Record<string, string>> = {
  ENOTFOUND: 'that host name does not resolve: check it, or give an IP address',
  EAI_AGAIN: 'that host name could not be resolved now: check it, or give an IP address',
  EADDRINUSE: 'that port is in use: pick another',
  EADDRNOTAVAIL: 'that address is not one of this machine’s: pick one it has (e.g. 127.0.0.1)',
  ECONNREFUSED: 'nothing listens there: start the other side first, or check the address',
  EACCES: 'permission denied: pick another port (≥ 1024) or path',
  ENOENT: 'no such file or directory: check the path',
  EEXIST: 'something is already at that path: pick another',
  ENOTDIR: 'a file stands where a directory is needed: pick another path',
};

/** An operating-system error (a `code` like ENOTFOUND and a `syscall`) as one line, or undefined. */
function systemErrorLine(error: unknown): string | undefined {
  if (!(error instanceof Error)) return undefined;
  const { code, syscall } = error as Error & { code?: unknown; syscall?: unknown };
  if (typeof code !== 'string' || typeof syscall !== 'string' || !/^E[A-Z0-9_]+$/.test(code))
    return undefined;
  const hint = SYSTEM_ERROR_HINTS[code];
  return hint === undefined ? error.message : `${error.message} — ${hint}`;
}

/** Runs the CLI on `argv` (without node and script) and returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  abortedByError = false;
  try {
    actionExit = EXIT_OK;
    await program.parseAsync([...argv], { from: 'user' });
    return actionExit;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; they already printed what they had to say.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT_OK;
      if (error.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    abortedByError = true;
    const system = systemErrorLine(error);
    if (system !== undefined) {
      process.stderr.write(`ipipe: ${system}\n`);
      return EXIT_ENVIRONMENT;
    }
    if (error instanceof IpipeError) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      if (error.code === 'IPIPE_ERR_CLI_USAGE' || error.code === 'IPIPE_ERR_CONFIG_INVALID')
        return EXIT_USAGE;
      // A cluster member that would not start (a port in use, a damaged file) is the environment's.
      if (error.code === 'IPIPE_ERR_CLUSTER_START_FAILED') return EXIT_ENVIRONMENT;
      return EXIT_CHECK_FAILED;
    }
    throw error;
  }
}

/**
 * Runs the CLI as a process: sets the exit code, and after an error (or an environment failure,
 * exit 3) lets the process exit even if the failed command left threads or sockets open — a
 * moment to flush output first, through a timer that fires only if something else keeps the
 * process alive. bin/ipipe.mjs and `tsx src/cli/main.ts` both come here.
 */
export async function runCli(argv: readonly string[]): Promise<void> {
  const exitSoon = (code: number): void => {
    process.exitCode = code;
    setTimeout(() => process.exit(code), 1_000).unref();
  };
  try {
    const code = await main(argv);
    if (abortedByError || code === EXIT_ENVIRONMENT) exitSoon(code);
    else process.exitCode = code;
  } catch (error) {
    process.stderr.write(
      `ipipe: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    exitSoon(EXIT_ENVIRONMENT);
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) await runCli(process.argv.slice(2));
