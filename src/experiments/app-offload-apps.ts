/**
 * Which applications the offload experiment can run, by name (the CLI's `ipipe experiment
 * rkv|dt|rta`). Each entry builds the app's OffloadApp from an optional app configuration.
 */

import { ConfigError } from '../errors.ts';
import type { OffloadApp, OffloadAppName } from './app-offload.ts';
import { type DtOffloadOptions, dtOffloadApp } from './app-offload-dt.ts';
import { type RkvOffloadOptions, rkvOffloadApp } from './app-offload-rkv.ts';
import { rtaOffloadApp } from './app-offload-rta.ts';

/**
 * The OffloadApp for `name`, configured by `config` (the app's own configuration object, e.g.
 * an RtaConfigInput). Throws the app's own configuration error (ConfigError for DT and RKV) for a
 * bad `config`.
 */
export function appFor(name: OffloadAppName, config?: unknown): OffloadApp {
  switch (name) {
    case 'rta':
      return rtaOffloadApp(config === undefined ? {} : { config });
    case 'dt':
      return dtOffloadApp(dtOptions(config));
    case 'rkv':
      return rkvOffloadApp(rkvOptions(config));
  }
}

/** DT's experiment options from a user's JSON object: `keys`, `zipfExponent`, `participants`. */
function dtOptions(config: unknown): DtOffloadOptions {
  if (config === undefined) return {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new ConfigError(
      'dt',
      'the app config must be an object like { "keys": 4000, "zipfExponent": 0.99 }',
    );
  }
  const known = new Set(['keys', 'zipfExponent', 'participants']);
  const record = config as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!known.has(key))
      throw new ConfigError(`dt.${key}`, `unknown option (known: ${[...known].join(', ')})`);
  }
  const options: { keys?: number; zipfExponent?: number; participants?: number } = {};
  for (const key of known) {
    const value = record[key];
    if (value === undefined) continue;
    if (typeof value !== 'number')
      throw new ConfigError(`dt.${key}`, `must be a number, got ${JSON.stringify(value)}`);
    options[key as 'keys'] = value;
  }
  return options;
}

/**
 * RKV's experiment options from a user's JSON object: `keys`, `zipfExponent`, `getFraction`,
 * `memtableBytes` (numbers) and `warmMemtable` (boolean).
 */
function rkvOptions(config: unknown): RkvOffloadOptions {
  if (config === undefined) return {};
  if (typeof config !== 'object' || config === null || Array.isArray(config)) {
    throw new ConfigError(
      'rkv',
      'the app config must be an object like { "keys": 1000000, "zipfExponent": 0.99 }',
    );
  }
  const numbers = ['keys', 'zipfExponent', 'getFraction', 'memtableBytes'] as const;
  const known = new Set<string>([...numbers, 'warmMemtable']);
  const record = config as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (!known.has(key))
      throw new ConfigError(`rkv.${key}`, `unknown option (known: ${[...known].join(', ')})`);
  }
  const options: { -readonly [K in keyof RkvOffloadOptions]: RkvOffloadOptions[K] } = {};
  for (const key of numbers) {
    const value = record[key];
    if (value === undefined) continue;
    if (typeof value !== 'number')
      throw new ConfigError(`rkv.${key}`, `must be a number, got ${JSON.stringify(value)}`);
    options[key] = value;
  }
  const warm = record['warmMemtable'];
  if (warm !== undefined) {
    if (typeof warm !== 'boolean') {
      throw new ConfigError('rkv.warmMemtable', `must be true or false, got ${JSON.stringify(warm)}`);
    }
    options.warmMemtable = warm;
  }
  return options;
}
