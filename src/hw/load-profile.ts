/**
 * Finding a hardware profile: a built-in by name (profiles.ts), or a user's JSON file — for
 * instance someone's own BlueField-2 measurements — validated against the schema (schema.ts).
 *
 * A user file is one JSON object. It may start from a built-in with `"extends": "<name>"` and give
 * only what differs: objects are merged key by key, arrays and other values replace the built-in's.
 * The result must be a complete profile; every problem is a ConfigError
 * (IPIPE_ERR_CONFIG_INVALID) whose `path` names the field (`forwarding.computeBaseNs`) and whose
 * message says what was expected. Loaded profiles are deeply frozen, like the built-ins.
 */

import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { ConfigError } from '../errors.ts';
import { BUILTIN_PROFILES, deepFreeze } from './profiles.ts';
import { type HardwareProfile, type HostProfile, hardwareProfileSchema, type NicProfile } from './schema.ts';

/** Names of every built-in profile, NICs first. */
export function knownProfileNames(): string[] {
  return Object.keys(BUILTIN_PROFILES);
}

function unknownProfile(name: string, wanted: string): ConfigError {
  return new ConfigError(
    '',
    `unknown ${wanted} profile "${name}"; known profiles: ${knownProfileNames().join(', ')} ` +
      '(or load your own with loadProfileFile)',
  );
}

/**
 * A built-in profile by name.
 * @throws ConfigError listing the known names when there is none.
 */
export function getProfile(name: string): HardwareProfile {
  const profile = Object.hasOwn(BUILTIN_PROFILES, name) ? BUILTIN_PROFILES[name] : undefined;
  if (profile === undefined) throw unknownProfile(name, 'hardware');
  return profile;
}

/** A built-in NIC profile by name; a host name or unknown name is a ConfigError. */
export function getNicProfile(name: string): NicProfile {
  const profile = getProfile(name);
  if (profile.kind !== 'nic') throw new ConfigError('', `profile "${name}" is a host, not a NIC`);
  return profile;
}

/** A built-in host profile by name; a NIC name or unknown name is a ConfigError. */
export function getHostProfile(name: string): HostProfile {
  const profile = getProfile(name);
  if (profile.kind !== 'host') throw new ConfigError('', `profile "${name}" is a NIC, not a host`);
  return profile;
}

/** The built-in host a NIC was measured in. */
export function hostOf(nic: NicProfile): HostProfile {
  return getHostProfile(nic.host);
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `overrides` merged onto `base`: objects key by key, everything else replaced. */
function mergeOnto(base: unknown, overrides: unknown): unknown {
  if (!isPlainObject(base) || !isPlainObject(overrides)) return overrides;
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(overrides)) {
    merged[key] = key in base ? mergeOnto(base[key], value) : value;
  }
  return merged;
}

/** `a.b[2].c` from a zod issue path. */
function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const key of path) {
    if (typeof key === 'number') text += `[${key}]`;
    else text += text === '' ? String(key) : `.${String(key)}`;
  }
  return text;
}

/** A zod issue as a short message: "expected number, received string". */
function describeIssue(issue: z.core.$ZodIssue): string {
  return issue.message.replace(/^Invalid (input|option): /, '');
}

/**
 * Validates a profile given as a plain value (parsed JSON), resolving `extends`.
 * `origin` names where it came from in error messages.
 * @throws ConfigError naming the first failing path, with every problem listed in the message.
 */
export function parseProfile(value: unknown, origin = 'profile'): HardwareProfile {
  if (!isPlainObject(value)) {
    throw new ConfigError('', `${origin}: expected a JSON object with "kind": "nic" or "host"`);
  }
  let candidate: unknown = value;
  if ('extends' in value) {
    const { extends: baseName, ...rest } = value;
    if (typeof baseName !== 'string') {
      throw new ConfigError('extends', `${origin}: expected the name of a built-in profile`);
    }
    if (!Object.hasOwn(BUILTIN_PROFILES, baseName)) {
      throw new ConfigError(
        'extends',
        `${origin}: unknown profile "${baseName}"; known profiles: ${knownProfileNames().join(', ')}`,
      );
    }
    candidate = mergeOnto(structuredClone(BUILTIN_PROFILES[baseName]), rest);
  }
  const result = hardwareProfileSchema.safeParse(candidate);
  if (!result.success) {
    const issues = result.error.issues;
    const first = issues[0]!;
    const others = issues
      .slice(1, 6)
      .map((issue) => `${formatPath(issue.path) || '(top level)'}: ${describeIssue(issue)}`);
    const more = issues.length > 6 ? `; and ${issues.length - 6} more` : '';
    const also = others.length > 0 ? ` (also ${others.join('; ')}${more})` : '';
    throw new ConfigError(formatPath(first.path), `${describeIssue(first)} (${origin})${also}`);
  }
  const profile = result.data;
  if (
    profile.kind === 'nic' &&
    profile.dispatch.kind === 'traffic-manager' &&
    profile.placement === 'off-path'
  ) {
    throw new ConfigError(
      'dispatch.kind',
      `an off-path NIC has no traffic manager (${origin}): use "software-dispatcher"`,
    );
  }
  if (profile.kind === 'nic' && profile.dispatch.kind === 'software-dispatcher' && profile.cores.count < 2) {
    // The runtime gives one core to the dispatcher (models/dispatcher.ts): with one core no
    // worker would be left to run an actor.
    throw new ConfigError(
      'cores.count',
      `an off-path NIC needs at least 2 cores (one runs iPipe's software dispatcher), got ${profile.cores.count} (${origin})`,
    );
  }
  return deepFreeze(profile);
}

/**
 * Reads, parses and validates a user profile file.
 * @throws ConfigError when the file cannot be read, is not JSON, or fails validation.
 */
export function loadProfileFile(filePath: string): HardwareProfile {
  let text: string;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (error) {
    throw new ConfigError('', `cannot read profile file ${filePath}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  let value: unknown;
  try {
    // A byte-order mark (Notepad and other editors write one) is not JSON but not an error either.
    value = JSON.parse(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
  } catch (error) {
    throw new ConfigError('', `profile file ${filePath} is not valid JSON: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return parseProfile(value, filePath);
}
