/**
 * The actors a live node hosts, as data every thread can load: each entry names the module and
 * export of its definition (actors are code, and code cannot be posted between threads — every
 * core imports the same modules), its id and instance name.
 */

import { pathToFileURL } from 'node:url';
import { type AnyActorDefinition, isActorDefinition } from '../../../actor/define-actor.ts';
import { ConfigError } from '../../../errors.ts';
import type { ActorId } from '../../../ids.ts';

export interface CatalogEntry {
  readonly id: ActorId;
  readonly name: string;
  /** Absolute path or file URL of the module exporting the definition. */
  readonly module: string;
  /** Export name; 'default' or a named export. */
  readonly exportName: string;
  /**
   * The cluster node the actor lives on (default: the node reading the catalog). Every node of a
   * cluster loads the same catalog; an entry of another node is a remote row there, so handlers
   * can `ctx.send` to it and the NIC forwards the message to that node.
   */
  readonly node?: number;
}

/** Imports every entry's definition (same order). */
export async function loadDefinitions(entries: readonly CatalogEntry[]): Promise<AnyActorDefinition[]> {
  const modules = new Map<string, Record<string, unknown>>();
  const definitions: AnyActorDefinition[] = [];
  for (const entry of entries) {
    const url = entry.module.startsWith('file:') ? entry.module : pathToFileURL(entry.module).href;
    let module = modules.get(url);
    if (!module) {
      module = (await import(url)) as Record<string, unknown>;
      modules.set(url, module);
    }
    const definition = module[entry.exportName];
    if (!isActorDefinition(definition)) {
      throw new ConfigError(
        `actor ${entry.name}`,
        `${entry.module} has no actor definition exported as "${entry.exportName}" (use defineActor and export it)`,
      );
    }
    definitions.push(definition);
  }
  return definitions;
}

/**
 * Every actor definition a module exports, with its export name (for `ipipe run <module>`), in the
 * alphabetical order of the export names (a module namespace lists its exports that way, whatever
 * their order in the source). `lookalikes` names exports that have an actor definition's shape but
 * were not made by this copy of `defineActor` — a second instance of the actor API, as when a file
 * outside an ESM package is loaded as CommonJS.
 */
export async function discoverDefinitions(
  module: string,
): Promise<{ exportName: string; definition: AnyActorDefinition }[] & { lookalikes?: string[] }> {
  const url = module.startsWith('file:') ? module : pathToFileURL(module).href;
  const exports = (await import(url)) as Record<string, unknown>;
  const found: { exportName: string; definition: AnyActorDefinition }[] & { lookalikes?: string[] } = [];
  const lookalikes: string[] = [];
  for (const [exportName, value] of Object.entries(exports)) {
    if (isActorDefinition(value)) found.push({ exportName, definition: value });
    else if (looksLikeActorDefinition(value)) lookalikes.push(exportName);
  }
  if (lookalikes.length > 0) found.lookalikes = lookalikes;
  return found;
}

function looksLikeActorDefinition(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as { name?: unknown; exec?: unknown };
  return typeof candidate.name === 'string' && typeof candidate.exec === 'function';
}
