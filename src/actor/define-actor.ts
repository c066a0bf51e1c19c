/**
 * `defineActor`: an actor as a module-level value (iPipe §3 "Actors" — an actor has an init
 * handler, an exec handler, private state made of DMOs, a mailbox and an exec lock; Table 4's
 * `actor_create` / `actor_register` take such a definition).
 *
 *   export const counter = defineActor({
 *     name: 'counter',
 *     messages: counterMessages,       // the tagged union exec receives
 *     replies: counterReplies,         // optional: what ctx.reply sends back
 *     placement: 'any',                // 'nic' | 'host' pin it; 'any' lets the runtime migrate it
 *     exclusive: true,                 // the exec lock: never on two cores at once (default)
 *     init(ctx) { ctx.setRoot('count', ctx.dmo.allocate(8)); },
 *     exec(ctx, message) { ... },      // message is fully typed from `messages`
 *     cost(message) { return { instructions: 1200, ipc: 1.4, mpki: 0.6 }; },
 *   });
 *
 * A definition is logic only — no state, no runtime: the same frozen value is instantiated on
 * the NIC or the host, in sim or live, any number of times under different instance names.
 * Mistakes are refused here, when the module loads, with what to fix.
 */

import { ActorDefinitionError } from '../errors.ts';
import { isMessageCodec, type MessageCodec } from './codec.ts';
import type { ActorContext } from './context.ts';
import { type HandlerWork, validateHandlerWork } from './cost.ts';

/** Actor (and instance) names: a lowercase letter, then up to 62 lowercase letters, digits or dashes. */
export const ACTOR_NAME_PATTERN: RegExp = /^[a-z][a-z0-9-]{0,62}$/;

/** Where an actor may run. */
export const PLACEMENTS = ['nic', 'host', 'any'] as const;

/**
 * `nic`: pinned to the NIC; `host`: pinned to the host (e.g. an actor that touches the disk);
 * `any`: starts where the runtime puts it and may migrate between NIC and host under load.
 */
export type Placement = (typeof PLACEMENTS)[number];

/** What `defineActor` takes. `M` and `R` are inferred from `messages` and `replies`. */
export interface ActorSpec<M, R> {
  readonly name: string;
  readonly messages: MessageCodec<M>;
  readonly replies?: MessageCodec<R>;
  readonly placement?: Placement;
  readonly exclusive?: boolean;
  /** Runs once per instance before any message: allocate DMOs, record them with `ctx.setRoot`. */
  init?(ctx: ActorContext<M, R>): void;
  /** Handles one message; synchronous, runs to completion. */
  exec(ctx: ActorContext<M, R>, message: M): void;
  /** The work one message costs (for the simulator). Must be pure: it may be called more than once. */
  cost?(message: M): HandlerWork;
}

/**
 * A validated, frozen actor definition. Every member is present: a missing `init` becomes a no-op
 * and a missing `cost` answers undefined, so runtimes never branch on optional handlers.
 * Members are declared as methods so a definition of any message type fits `AnyActorDefinition`.
 */
export interface ActorDefinition<M, R = never> {
  readonly name: string;
  readonly messages: MessageCodec<M>;
  /** Codec of `ctx.reply`'s answers; undefined when the actor never replies. */
  readonly replies: MessageCodec<R> | undefined;
  readonly placement: Placement;
  /** The exec lock: true when the actor must never run on two cores at once. */
  readonly exclusive: boolean;
  init(ctx: ActorContext<M, R>): void;
  exec(ctx: ActorContext<M, R>, message: M): void;
  /** The declared work of handling `message`, or undefined when the actor declares none. */
  cost(message: M): HandlerWork | undefined;
  /** True when the spec had a cost hook (the simulator then never falls back to its default). */
  readonly hasCost: boolean;
}

/** A definition of any message types, as tables and runtimes store them. */
export type AnyActorDefinition = ActorDefinition<unknown, unknown>;

const SPEC_KEYS: readonly string[] = [
  'name',
  'messages',
  'replies',
  'placement',
  'exclusive',
  'init',
  'exec',
  'cost',
];
const SPEC_KEY_SET: ReadonlySet<string> = new Set(SPEC_KEYS);
const PLACEMENT_SET: ReadonlySet<string> = new Set(PLACEMENTS);

const createdDefinitions = new WeakSet<object>();

/** True when `value` came from `defineActor`. */
export function isActorDefinition(value: unknown): value is AnyActorDefinition {
  return typeof value === 'object' && value !== null && createdDefinitions.has(value);
}

/** True when `name` is usable as an actor or instance name. */
export function isValidActorName(name: unknown): name is string {
  return typeof name === 'string' && ACTOR_NAME_PATTERN.test(name);
}

function noInit(): void {}
function noCost(): undefined {
  return undefined;
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function'; // not its source text
  return typeof value === 'object' ? 'an object' : String(value);
}

/**
 * Validates an actor spec and returns its frozen definition. Throws ActorDefinitionError listing
 * every problem found (bad name, missing exec, unknown placement, a codec not built by
 * `messages()`, non-function handlers, unknown keys).
 */
export function defineActor<M, R = never>(spec: ActorSpec<M, R>): ActorDefinition<M, R> {
  if (typeof spec !== 'object' || spec === null) {
    throw new ActorDefinitionError('(unnamed)', `defineActor needs a spec object, got ${describe(spec)}`);
  }
  const raw = spec as unknown as Readonly<Record<string, unknown>>;
  const { name, messages, replies, placement, exclusive, init, exec, cost } = raw;
  const label = typeof name === 'string' && name !== '' ? name : '(unnamed)';
  const problems: string[] = [];

  for (const key of Object.keys(raw)) {
    if (!SPEC_KEY_SET.has(key)) problems.push(`unknown key "${key}" (known: ${SPEC_KEYS.join(', ')})`);
  }
  if (!isValidActorName(name)) {
    problems.push(
      `name must match ${ACTOR_NAME_PATTERN} (a lowercase letter, then lowercase letters, digits or dashes; ` +
        `at most 63 characters), got ${describe(name)}`,
    );
  }
  if (!isMessageCodec(messages)) {
    problems.push(`messages must be a codec built with messages({...}), got ${describe(messages)}`);
  }
  if (replies !== undefined && !isMessageCodec(replies)) {
    problems.push(`replies must be a codec built with messages({...}) or absent, got ${describe(replies)}`);
  }
  if (placement !== undefined && !(typeof placement === 'string' && PLACEMENT_SET.has(placement))) {
    problems.push(
      `placement must be one of ${PLACEMENTS.map((p) => `'${p}'`).join(', ')}, got ${describe(placement)}`,
    );
  }
  if (exclusive !== undefined && typeof exclusive !== 'boolean') {
    problems.push(
      `exclusive must be a boolean (true: never on two cores at once), got ${describe(exclusive)}`,
    );
  }
  if (typeof exec !== 'function') {
    problems.push(`exec must be a function (ctx, message) => void, got ${describe(exec)}`);
  }
  if (init !== undefined && typeof init !== 'function') {
    problems.push(`init must be a function (ctx) => void or absent, got ${describe(init)}`);
  }
  if (cost !== undefined && typeof cost !== 'function') {
    problems.push(`cost must be a function (message) => HandlerWork or absent, got ${describe(cost)}`);
  }
  if (problems.length > 0) throw new ActorDefinitionError(label, problems.join('; '));

  // The spec's members are kept as given (typed through the spec, not through `raw`), so `this`
  // inside an app's handler is the definition, as it would be for any method.
  const definition: ActorDefinition<M, R> = {
    name: spec.name,
    messages: spec.messages,
    replies: spec.replies,
    placement: spec.placement ?? 'any',
    exclusive: spec.exclusive ?? true,
    init: spec.init ?? noInit,
    exec: spec.exec,
    cost: spec.cost ?? noCost,
    hasCost: spec.cost !== undefined,
  };
  createdDefinitions.add(definition);
  return Object.freeze(definition);
}

/**
 * The validated work of `definition` handling `message`, or undefined when it declares none.
 * Throws ActorDefinitionError naming the actor when the cost hook returns an invalid value.
 */
export function declaredWork<M, R>(definition: ActorDefinition<M, R>, message: M): HandlerWork | undefined {
  if (!definition.hasCost) return undefined;
  return validateHandlerWork(definition.cost(message), definition.name);
}

/**
 * `definition` with some handlers replaced: the same name, codecs, placement and exec lock, and
 * the original `init`, `exec` and `cost` wherever no replacement is given (a definition without a
 * cost hook keeps having none). How an experiment or a platform adds behaviour around an
 * application's actor — packet I/O the simulator should charge, a device a setup message names —
 * without editing the application.
 */
export function redefineActor<M, R>(
  definition: ActorDefinition<M, R>,
  overrides: {
    readonly exec?: (ctx: ActorContext<M, R>, message: M) => void;
    readonly cost?: (message: M) => HandlerWork;
  },
): ActorDefinition<M, R> {
  const cost =
    overrides.cost ??
    (definition.hasCost ? (message: M) => definition.cost(message) as HandlerWork : undefined);
  return defineActor<M, R>({
    name: definition.name,
    messages: definition.messages,
    ...(definition.replies === undefined ? {} : { replies: definition.replies }),
    placement: definition.placement,
    exclusive: definition.exclusive,
    init: (ctx) => definition.init(ctx),
    exec: overrides.exec ?? ((ctx, message) => definition.exec(ctx, message)),
    ...(cost === undefined ? {} : { cost }),
  });
}
