#!/usr/bin/env node
/**
 * The `ipipe` command line: parses and validates arguments, calls the library, prints. Exit codes:
 * 0 ok, 1 a check failed, 2 usage or configuration error, 3 environment problem (STYLE.md).
 */

import { pathToFileURL } from 'node:url';
import { Command, CommanderError } from '@commander-js/extra-typings';
import { IpipeError } from '../errors.ts';
import { freshSeed } from '../platform/sim/random.ts';
import { walkthroughCommand } from './commands/walkthrough.ts';
import { parseSeed } from './options.ts';

export const EXIT_OK = 0;
export const EXIT_CHECK_FAILED = 1;
export const EXIT_USAGE = 2;
export const EXIT_ENVIRONMENT = 3;

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
      'the most telling end-to-end run ipipe can give today (currently: the scheduler walkthrough)',
    )
    .option('--seed <n>', 'seed of every random choice (printed; same seed, same run)', parseSeed)
    .option('--json', 'print one JSON document instead of text')
    .action((options) => {
      walkthroughCommand({ seed: options.seed ?? freshSeed(), json: options.json === true });
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

  return program as unknown as Command;
}

/** Runs the CLI on `argv` (without node and script) and returns the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const program = buildProgram();
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return EXIT_OK;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version are "errors" to commander; they already printed what they had to say.
      if (error.code === 'commander.helpDisplayed' || error.code === 'commander.version') return EXIT_OK;
      if (error.code === 'commander.help') return EXIT_OK;
      return EXIT_USAGE;
    }
    if (error instanceof IpipeError) {
      process.stderr.write(`ipipe: ${error.message} [${error.code}]\n`);
      return error.code === 'IPIPE_ERR_CLI_USAGE' || error.code === 'IPIPE_ERR_CONFIG_INVALID'
        ? EXIT_USAGE
        : EXIT_CHECK_FAILED;
    }
    throw error;
  }
}

const invokedDirectly =
  process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href;
if (invokedDirectly) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(
        `ipipe: unexpected failure: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
      );
      process.exitCode = EXIT_ENVIRONMENT;
    },
  );
}
