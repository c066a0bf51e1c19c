/**
 * Parsing and validating option values shared by commands. Each parser throws a UsageError that
 * names the option and the accepted form, which main.ts turns into exit code 2.
 */

import { existsSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { ConfigError, UsageError } from '../errors.ts';
import { getHostProfile, getNicProfile, hostOf, knownProfileNames, loadProfileFile } from '../hw/index.ts';
import type { HardwareProfile, HostProfile, NicProfile } from '../hw/schema.ts';

/** A seed: a non-negative integer that fits the simulator's 53-bit seeds. */
export function parseSeed(value: string): number {
  const seed = Number(value);
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(seed)) {
    throw new UsageError(`--seed must be a non-negative integer below 2^53, got "${value}"`);
  }
  return seed;
}

const DURATION_UNITS_NS: Readonly<Record<string, number>> = { ns: 1, us: 1e3, µs: 1e3, ms: 1e6, s: 1e9 };

/** A simulated duration such as `200ms`, `2s`, `500us`, `1000000ns`, as integer nanoseconds. */
export function parseDuration(option: string): (value: string) => number {
  return (value) => {
    const match = /^(\d+(?:\.\d+)?)(ns|us|µs|ms|s)$/.exec(value.trim());
    const unit = match?.[2];
    const ns =
      match && unit ? Math.round(Number(match[1]) * (DURATION_UNITS_NS[unit] as number)) : Number.NaN;
    if (!(ns > 0) || !Number.isSafeInteger(ns)) {
      throw new UsageError(
        `${option} must be a positive duration like 200ms, 2s, 500us or 1000000ns, got "${value}"`,
      );
    }
    return ns;
  };
}

/**
 * A duration (as {@link parseDuration}) within [minNs, maxNs]; outside it a usage error that says
 * the bound and `why` it is there.
 */
export function parseDurationWithin(
  option: string,
  bounds: {
    readonly minNs: number;
    readonly maxNs: number;
    readonly whyMin: string;
    readonly whyMax: string;
  },
): (value: string) => number {
  const parse = parseDuration(option);
  const show = (ns: number) => (ns >= 1e6 ? `${ns / 1e6}ms` : `${ns / 1e3}us`);
  return (value) => {
    const ns = parse(value);
    if (ns < bounds.minNs)
      throw new UsageError(
        `${option} must be at least ${show(bounds.minNs)}, got "${value}": ${bounds.whyMin}`,
      );
    if (ns > bounds.maxNs)
      throw new UsageError(
        `${option} must be at most ${show(bounds.maxNs)}, got "${value}": ${bounds.whyMax}`,
      );
    return ns;
  };
}

/**
 * An address to bind: a host name, or an IPv4 address — four dotted numbers that are not a valid
 * one (`999.1.1.1`) are refused here, not looked up as a name and reported as a port problem.
 */
export function parseAddress(option: string): (value: string) => string {
  return (value) => {
    const trimmed = value.trim();
    if (trimmed === '' || (/^[\d.]+$/.test(trimmed) && !isIPv4(trimmed))) {
      throw new UsageError(
        `${option} must be an IPv4 address of this machine (each of the four parts 0–255, e.g. 127.0.0.1 or 0.0.0.0) or a host name, got "${value}"`,
      );
    }
    return trimmed;
  };
}

/** A positive integer option (core counts, actors, packet sizes…) within [min, max]. */
export function parseIntegerIn(option: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!/^\d+$/.test(value.trim()) || n < min || n > max) {
      throw new UsageError(`${option} must be an integer in [${min}, ${max}], got "${value}"`);
    }
    return n;
  };
}

/**
 * A plain decimal such as `0.5`, `.5` or `5e-1`. Number() alone also reads `0x1`, `0b1` and
 * `0o1` as 1, which would turn a typo into a run at full load.
 */
const DECIMAL = /^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i;

/** Whether `value` is a plain decimal number (see DECIMAL): the check to make before `Number(value)`. */
export function isDecimal(value: string): boolean {
  return DECIMAL.test(value.trim());
}

/** A fraction in (0, 1]: loads, shares. */
export function parseFraction(option: string, value: string): number {
  const n = Number(value);
  if (!(n > 0 && n <= 1) || !isDecimal(value)) {
    throw new UsageError(`${option} must be a number in (0, 1], got "${value}"`);
  }
  return n;
}

/**
 * The distinct values of a list option, in order. A value listed twice is harmless (it is
 * measured once) but likely a typo for another, so the user is told rather than left to wonder
 * why a point is missing.
 */
export function distinct<T>(option: string, values: readonly T[]): T[] {
  const unique = [...new Set(values)];
  if (unique.length < values.length) {
    const repeated = unique.filter((value) => values.indexOf(value) !== values.lastIndexOf(value));
    process.stderr.write(
      `ipipe: warning: ${option} lists ${repeated.join(', ')} more than once; each runs once\n`,
    );
  }
  return unique;
}

/** A comma-separated list of loads in (0, 1], e.g. `0.1,0.5,0.9`. */
export function parseLoads(value: string): number[] {
  const loads = value.split(',').map((part) => parseFraction('--loads', part.trim()));
  return distinct('--loads', loads).sort((a, b) => a - b);
}

/** One of a fixed set of words, or a comma-separated list of them. */
export function parseChoice<T extends string>(option: string, choices: readonly T[]): (value: string) => T {
  return (value) => {
    if ((choices as readonly string[]).includes(value)) return value as T;
    throw new UsageError(`${option} must be one of ${choices.join(', ')}, got "${value}"`);
  };
}

export function parseChoices<T extends string>(
  option: string,
  choices: readonly T[],
): (value: string) => T[] {
  const one = parseChoice(option, choices);
  return (value) =>
    distinct(
      option,
      value.split(',').map((part) => one(part.trim())),
    );
}

export interface ResolvedNic {
  readonly nic: NicProfile;
  readonly host: HostProfile;
}

/** A value names a file rather than a built-in: it ends in .json, has a slash, or exists here. */
function looksLikeFile(value: string): boolean {
  return value.endsWith('.json') || value.includes('/') || existsSync(value);
}

/**
 * Results, file names and the paper's reference numbers all go by a profile's name: a changed
 * card under a built-in's name would be written over that built-in's files and compared with the
 * paper's measurements of a card it no longer is.
 */
function refuseBuiltInName(profile: HardwareProfile): void {
  if (knownProfileNames().includes(profile.name)) {
    throw new ConfigError(
      'name',
      `"${profile.name}" is a built-in profile's name; give your profile its own (e.g. "${profile.name}-mine")`,
    );
  }
}

/**
 * `--host`: a built-in host profile's name, or a path to a JSON host profile (which may `extends`
 * a built-in host), for a NIC measured in another server than the built-ins'.
 */
export function resolveHost(value: string): HostProfile {
  const file = looksLikeFile(value);
  try {
    const profile = file ? loadProfileFile(value) : getHostProfile(value);
    if (profile.kind !== 'host') throw new ConfigError('kind', 'a NIC profile; --host needs a host profile');
    if (file) refuseBuiltInName(profile);
    return profile;
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (file) throw new UsageError(`--host ${value}: ${error.message}`);
    const known = knownHostNames().join(', ');
    if (knownProfileNames().includes(value)) {
      throw new UsageError(`--host: "${value}" is a NIC profile; --host needs a host profile: ${known}`);
    }
    throw new UsageError(
      `--host: unknown host profile "${value}"; known host profiles: ${known} (or pass a path to a JSON profile)`,
    );
  }
}

/**
 * `--nic`: a built-in profile name, or a path to a JSON profile (which may `extends` a built-in).
 * Unknown names list the known ones; a bad file names the failing field. The host is `--host`'s
 * when given (`hostValue`), else the built-in host the NIC profile names.
 */
export function resolveNic(value: string, hostValue?: string): ResolvedNic {
  const file = looksLikeFile(value);
  let nic: NicProfile;
  try {
    const profile = file ? loadProfileFile(value) : getNicProfile(value);
    if (profile.kind !== 'nic')
      throw new UsageError(`--nic needs a NIC profile, "${value}" is a host profile`);
    if (file) refuseBuiltInName(profile);
    // Without --host the NIC runs in the built-in host it names; hostOf's own error would not
    // name the field.
    const hosts = knownHostNames();
    if (hostValue === undefined && !hosts.includes(profile.host)) {
      throw new ConfigError(
        'host',
        `unknown host profile "${profile.host}"; known host profiles: ${hosts.join(', ')} (or give your own with --host file.json)`,
      );
    }
    nic = profile;
  } catch (error) {
    if (error instanceof ConfigError && !file && knownProfileNames().includes(value)) {
      throw new UsageError(
        `--nic: "${value}" is a host profile; --nic needs a NIC profile: ${knownNicNames().join(', ')}`,
      );
    }
    if (error instanceof ConfigError && !file) {
      throw new UsageError(
        `--nic: unknown profile "${value}"; known NIC profiles: ${knownNicNames().join(', ')} ` +
          '(or pass a path to a JSON profile)',
      );
    }
    if (error instanceof ConfigError) throw new UsageError(`--nic ${value}: ${error.message}`);
    throw error;
  }
  return { nic, host: hostValue === undefined ? hostOf(nic) : resolveHost(hostValue) };
}

export function knownHostNames(): string[] {
  return knownProfileNames().filter((name) => !knownNicNames().includes(name));
}

export function knownNicNames(): string[] {
  return knownProfileNames().filter((name) => {
    try {
      getNicProfile(name);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The long flags the user typed for `command` (not those at their default): for the checks that
 * refuse an option the chosen mode would ignore.
 */
export function givenFlags(command: {
  readonly options: readonly {
    attributeName(): string;
    readonly long?: string | undefined;
    readonly flags: string;
  }[];
  getOptionValueSource(key: string): string | undefined;
}): string[] {
  return command.options
    .filter((option) => command.getOptionValueSource(option.attributeName()) === 'cli')
    .map((option) => option.long ?? option.flags);
}

/** A usage error naming the given flags that `mode` does not use, and what to do; nothing if none. */
export function refuseFlags(
  given: readonly string[],
  unused: readonly string[],
  mode: string,
  fix: string,
): void {
  const ignored = unused.filter((flag) => given.includes(flag));
  if (ignored.length === 0) return;
  throw new UsageError(
    `${ignored.join(', ')} ${ignored.length === 1 ? 'does' : 'do'} not apply to ${mode}: ${fix}`,
  );
}
