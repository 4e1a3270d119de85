import type { Message, MessageType } from "./types.js";

/**
 * "Receivers drop unknown members": the members each object of a message may have. Anything
 * else is removed after validation, at every level. A signed payload that carried such a member
 * then differs from the canonical form of the parsed message, so the signature no longer counts.
 */
type Shape = { readonly [member: string]: Shape | "value" | { readonly each: Shape } };

const money: Shape = { amount: "value", currency: "value" };
const askedItem: Shape = { description: "value", quantity: "value", unit: "value" };
const quotedItem: Shape = { ...askedItem, unit_price: money };
const slot: Shape = { start: "value", end: "value", time_zone: "value" };

const common: Shape = {
  "@context": "value",
  profile: "value",
  id: "value",
  type: "value",
  thread: "value",
  in_reply_to: "value",
  from: { party: "value", address: "value", name: "value", card: "value" },
  to: { address: "value" },
  nonce: "value",
  iat: "value",
  exp: "value",
  prev: "value",
  acting_for: { org_name: "value", contact: "value" },
  agent: { name: "value", kind: "value" },
  authority: { decided_by: "value", level: "value", limits_version: "value" },
  note: "value",
};

export const MESSAGE_SHAPES: Readonly<Record<MessageType, Shape>> = {
  ask_quote: { ...common, items: { each: askedItem }, wanted_by: "value" },
  quote: { ...common, items: { each: quotedItem }, total: money, delivery_by: "value", replaces: "value" },
  propose_times: { ...common, slots: { each: slot }, purpose: "value", location: "value", replaces: "value" },
  accept: { ...common, ref: "value", slot: "value" },
  decline: { ...common, ref: "value", reason: "value" },
  cancel: { ...common, ref: "value" },
};

const keep = (value: unknown, shape: Shape | "value" | { readonly each: Shape }): unknown => {
  if (shape === "value") return value;
  if ("each" in shape && Array.isArray(value)) return value.map((entry) => keep(entry, shape.each as Shape));
  const out: Record<string, unknown> = {};
  const source = value as Record<string, unknown>;
  for (const [name, inner] of Object.entries(shape as Shape)) {
    if (Object.hasOwn(source, name)) out[name] = keep(source[name], inner);
  }
  return out;
};

const sortedNames = new WeakMap<Shape, readonly string[]>();
const namesOf = (shape: Shape): readonly string[] => {
  let names = sortedNames.get(shape);
  if (names === undefined) {
    names = Object.keys(shape).sort();
    sortedNames.set(shape, names);
  }
  return names;
};

const wellFormed = (text: string): boolean => (text as string & { isWellFormed(): boolean }).isWellFormed();

/** What one projection found besides the new tree. */
interface Walk {
  plain: boolean;
  dropped: boolean;
}

// Module-level walkers (no closures made per message): this runs for every message signed or read.
const leaf = (value: unknown, walk: Walk): unknown => {
  switch (typeof value) {
    case "string":
      if (!wellFormed(value)) walk.plain = false;
      return value;
    case "number":
      if (!Number.isFinite(value)) walk.plain = false;
      return value;
    case "boolean":
      return value;
    case "object":
      if (value === null) return value;
      if (Array.isArray(value)) return value.map((entry) => leaf(entry, walk));
      walk.plain = false; // an object under a plain value: the general writer orders it
      return JSON.parse(JSON.stringify(value)) as unknown;
    default:
      walk.plain = false;
      return value;
  }
};

const project = (node: unknown, shape: Shape | { readonly each: Shape }, walk: Walk): unknown => {
  if ("each" in shape && Array.isArray(node))
    return node.map((entry) => project(entry, shape.each as Shape, walk));
  // The shape's names in canonical order, own members of the node only ("constructor" or
  // "__proto__" in a message is an unknown member, never a shape).
  const source = node as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const name of namesOf(shape as Shape)) {
    if (!Object.hasOwn(source, name)) continue;
    kept++;
    const inner = (shape as Shape)[name] as Shape | "value";
    out[name] = inner === "value" ? leaf(source[name], walk) : project(source[name], inner, walk);
  }
  if (kept !== Object.keys(source).length) walk.dropped = true;
  return out;
};

/** A value under a "value" member as the projection keeps it unchanged: no object inside. */
const plainLeaf = (value: unknown): boolean => {
  switch (typeof value) {
    case "string":
      return wellFormed(value);
    case "number":
      return Number.isFinite(value);
    case "boolean":
      return true;
    case "object":
      if (value === null) return true;
      if (!Array.isArray(value)) return false;
      for (let i = 0; i < value.length; i++) if (!(i in value) || !plainLeaf(value[i])) return false;
      return true;
    default:
      return false;
  }
};

const inShapeOrder = (node: unknown, shape: Shape | { readonly each: Shape }): boolean => {
  if ("each" in shape) {
    if (!Array.isArray(node)) return false;
    for (const entry of node) if (!inShapeOrder(entry, shape.each as Shape)) return false;
    return true;
  }
  if (node === null || typeof node !== "object" || Array.isArray(node)) return false;
  if (Object.getPrototypeOf(node) !== Object.prototype) return false;
  let previous = "";
  for (const name of Object.keys(node)) {
    if (!(previous < name) || !Object.hasOwn(shape, name)) return false;
    previous = name;
    const inner = (shape as Shape)[name] as Shape | "value" | { readonly each: Shape };
    const value = (node as Record<string, unknown>)[name];
    if (inner === "value" ? !plainLeaf(value) : !inShapeOrder(value, inner)) return false;
  }
  return true;
};

/**
 * Whether a validated message is already what `projectMessage` would make of it, member for
 * member and in the same order: only the profile's members, each object's members in UTF-16 order,
 * every value plain. Then `JSON.stringify` of it is its canonical form and no copy is needed.
 */
export const inProfileOrder = (validated: Message): boolean => {
  const shape = MESSAGE_SHAPES[validated.type];
  return shape !== undefined && inShapeOrder(validated, shape);
};

/**
 * One walk that does both of the functions below: the message with the unknown members removed (a
 * new tree that shares nothing with `validated`) and their JSON pointers. Members are inserted in
 * RFC 8785 order (no profile member name is an array index, so insertion order is kept), so when
 * `plain` is true `JSON.stringify(message)` already is the canonical form: every value is a string
 * without lone surrogates, a finite number, a boolean, null, or an array of such.
 */
export const projectMessage = (
  validated: Message,
): { message: Message; dropped: string[]; plain: boolean } => {
  const walk: Walk = { plain: true, dropped: false };
  const message = project(validated, MESSAGE_SHAPES[validated.type], walk) as Message;
  // The pointers are spelled out only when something was dropped, so a clean message builds none.
  const dropped = walk.dropped ? unknownMembers(validated, validated.type) : [];
  return { message, dropped, plain: walk.plain };
};

/** The message with every member this profile does not define for its type removed (a new object). */
export const dropUnknownMembers = (validated: Message): Message =>
  keep(validated, MESSAGE_SHAPES[validated.type]) as Message;

/** The members that would be dropped, as JSON pointers (for a plain-words warning). */
export const unknownMembers = (value: unknown, type: MessageType): string[] => {
  const found: string[] = [];
  const walk = (node: unknown, shape: Shape | "value" | { readonly each: Shape }, path: string): void => {
    if (shape === "value" || node === null || typeof node !== "object") return;
    if ("each" in shape && Array.isArray(node)) {
      node.forEach((entry, index) => {
        walk(entry, shape.each as Shape, `${path}/${index}`);
      });
      return;
    }
    for (const name of Object.keys(node)) {
      const inner = Object.hasOwn(shape, name) ? (shape as Shape)[name] : undefined;
      if (inner === undefined) found.push(`${path}/${name}`);
      else walk((node as Record<string, unknown>)[name], inner, `${path}/${name}`);
    }
  };
  walk(value, MESSAGE_SHAPES[type], "");
  return found;
};
