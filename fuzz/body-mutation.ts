// Mutations of a generated body. Each is a plain value (what to do, and a number that picks where), and
// applying it is a pure function of the tree, so a case shrinks and replays like any fast-check value.
//   replace    a node at any depth (the root included) by a value of another JSON type, or of its own
//              type at an edge (edge numbers, odd and huge strings, empty and huge arrays, deep nests)
//   drop       an entry of an object
//   add        an unknown entry, `__proto__`, `constructor` and `prototype` among the keys
//   duplicate  an entry repeated with another value (JSON.parse keeps the last)
//   grow       an array, or any value, repeated into a huge array
//   nest       a node wrapped in nesting past the parser's depth limit

import fc from 'fast-check';
import { approximateBytes, DeepNest, FuzzObject, kindOf, RepeatedArray, type FuzzJson, type JsonKind } from './fuzz-json.js';
import { BODY_LIMIT_BYTES, hostileOfKind, hostileValue, PROTOTYPE_KEYS, valueOfAnotherKind } from './hostile-values.js';

const JSON_KINDS: readonly JsonKind[] = ['null', 'boolean', 'number', 'string', 'array', 'object'];
const grownCount = fc.oneof({ weight: 4, arbitrary: fc.constant(101) }, { weight: 2, arbitrary: fc.constant(1_001) }, { weight: 1, arbitrary: fc.constant(10_001) });
/** A grown array stays below this size (a little past the body limit). */
const GROWN_BYTES_MAX = BODY_LIMIT_BYTES + 1024;
const NEST_DEPTHS: readonly number[] = [64, 65, 5_000];
/** Field names from the schemas, so an added key is sometimes a real field in the wrong place. */
const KNOWN_KEYS = ['amount', 'precise_amount', 'source', 'sources', 'destination', 'currency', 'meta_data', 'dry_run', 'transactions', 'status', 'name', 'id'];

export type Mutation =
  | { kind: 'replace'; at: number; sameKind: boolean; candidates: Record<JsonKind, FuzzJson> }
  | { kind: 'drop'; at: number }
  | { kind: 'add'; at: number; key: string; value: FuzzJson }
  | { kind: 'duplicate'; at: number; value: FuzzJson }
  | { kind: 'grow'; at: number; count: number }
  | { kind: 'nest'; at: number; depth: number; array: boolean };

/** A value of each other kind, drawn together so `replace` can pick one once it sees the node's kind. */
const candidatesByKind: fc.Arbitrary<Record<JsonKind, FuzzJson>> = fc.record({
  null: valueOfAnotherKind('null'),
  boolean: valueOfAnotherKind('boolean'),
  number: valueOfAnotherKind('number'),
  string: valueOfAnotherKind('string'),
  array: valueOfAnotherKind('array'),
  object: valueOfAnotherKind('object'),
});
const sameKindCandidates: fc.Arbitrary<Record<JsonKind, FuzzJson>> = fc.record(
  Object.fromEntries(JSON_KINDS.map((kind) => [kind, hostileOfKind(kind)])) as Record<JsonKind, fc.Arbitrary<FuzzJson>>,
);

const newKey = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...PROTOTYPE_KEYS) },
  { weight: 2, arbitrary: fc.constantFrom(...KNOWN_KEYS) },
  { weight: 2, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.constantFrom('', ' ', '\u0000', '\ud800', '😀', 'a'.repeat(300)) },
);

export const mutationArbitrary: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), sameKind: fc.constant(false), candidates: candidatesByKind }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), sameKind: fc.constant(true), candidates: sameKindCandidates }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('drop' as const), at: fc.nat() }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('add' as const), at: fc.nat(), key: newKey, value: hostileValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('duplicate' as const), at: fc.nat(), value: hostileValue }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('grow' as const), at: fc.nat(), count: grownCount }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('nest' as const), at: fc.nat(), depth: fc.constantFrom(...NEST_DEPTHS), array: fc.boolean() }) },
);

/** A path into a tree: indexes of object entries or array items; -1 steps into a repeated item or a nest's leaf. */
type Path = readonly number[];

export function applyMutations(body: FuzzJson, mutations: readonly Mutation[]): FuzzJson {
  return mutations.reduce(applyMutation, body);
}

export function applyMutation(body: FuzzJson, mutation: Mutation): FuzzJson {
  switch (mutation.kind) {
    case 'replace': {
      const path = pick(nodePaths(body), mutation.at);
      // The candidates hold, for each kind, a value of another kind (or of the same kind when sameKind).
      return replaceAt(body, path, (node) => mutation.candidates[kindOf(node)]);
    }
    case 'grow': {
      const path = pick(nodePaths(body), mutation.at);
      return replaceAt(body, path, (node) => {
        const item = Array.isArray(node) && node.length > 0 ? node[0] as FuzzJson : node;
        // Past the body limit any size is refused the same way; do not build hundreds of megabytes to show it.
        const count = Math.max(1, Math.min(mutation.count, Math.floor(GROWN_BYTES_MAX / approximateBytes(item))));
        return new RepeatedArray(item, count);
      });
    }
    case 'nest': {
      const path = pick(nodePaths(body), mutation.at);
      return replaceAt(body, path, (node) => new DeepNest(mutation.depth, mutation.array ? 'array' : 'object', node));
    }
    default:
      return mutateObject(body, mutation);
  }
}

function mutateObject(body: FuzzJson, mutation: Extract<Mutation, { kind: 'drop' | 'add' | 'duplicate' }>): FuzzJson {
  const objects = nodePaths(body).filter((path) => valueAt(body, path) instanceof FuzzObject);
  if (objects.length === 0) return body;
  return replaceAt(body, pick(objects, mutation.at), (node) => {
    const { entries } = node as FuzzObject;
    if (mutation.kind === 'add') return new FuzzObject([...entries, [mutation.key, mutation.value]]);
    if (entries.length === 0) return node;
    const index = Math.floor(mutation.at / objects.length) % entries.length;
    if (mutation.kind === 'drop') return new FuzzObject(entries.filter((_, position) => position !== index));
    const [key] = entries[index]!;
    return new FuzzObject([...entries, [key, mutation.value]]);
  });
}

function pick<T>(items: readonly T[], at: number): T {
  return items[at % items.length]!;
}

/** Every node of the tree, the root first. */
function nodePaths(root: FuzzJson): Path[] {
  const paths: Path[] = [];
  const walk = (value: FuzzJson, path: Path): void => {
    paths.push(path);
    if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...path, index]));
    else if (value instanceof FuzzObject) value.entries.forEach(([, item], index) => walk(item, [...path, index]));
    else if (value instanceof RepeatedArray) walk(value.item, [...path, -1]);
    else if (value instanceof DeepNest) walk(value.leaf, [...path, -1]);
  };
  walk(root, []);
  return paths;
}

function valueAt(root: FuzzJson, path: Path): FuzzJson {
  let value = root;
  for (const step of path) value = child(value, step);
  return value;
}

function child(value: FuzzJson, step: number): FuzzJson {
  if (Array.isArray(value)) return value[step] as FuzzJson;
  if (value instanceof FuzzObject) return value.entries[step]![1];
  if (value instanceof RepeatedArray) return value.item;
  if (value instanceof DeepNest) return value.leaf;
  throw new Error(`no child ${step} in a ${kindOf(value)}`);
}

/** The tree with the node at `path` replaced by `change(node)`; the rest is shared, not copied. */
function replaceAt(root: FuzzJson, path: Path, change: (node: FuzzJson) => FuzzJson): FuzzJson {
  if (path.length === 0) return change(root);
  const [step, ...rest] = path as [number, ...number[]];
  const replaced = replaceAt(child(root, step), rest, change);
  if (Array.isArray(root)) return root.map((item, index) => (index === step ? replaced : item));
  if (root instanceof FuzzObject) return new FuzzObject(root.entries.map((entry, index) => (index === step ? [entry[0], replaced] as const : entry)));
  if (root instanceof RepeatedArray) return new RepeatedArray(replaced, root.count);
  if (root instanceof DeepNest) return new DeepNest(root.depth, root.kind, replaced);
  return root;
}
