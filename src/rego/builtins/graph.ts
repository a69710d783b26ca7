import { RegoObject, RegoSet, keyOf, type ArrayValue, type Value } from '../value/index.js';
import { defineBuiltins } from './registry.js';
import { elements, obj } from './operands.js';
import { T, anyArray, anySet } from './types.js';

/** Every [path, value] pair under a value, parents before children, in OPA's iteration order. */
function* walk(v: Value, path: Value[]): Generator<Value> {
  yield [[...path], v];
  if (v instanceof RegoObject) {
    for (const [k, x] of v.entries()) {
      path.push(k);
      yield* walk(x, path);
      path.pop();
    }
  } else if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      path.push(i);
      yield* walk((v as ArrayValue)[i]!, path);
      path.pop();
    }
  } else if (v instanceof RegoSet) {
    for (const m of v.values()) {
      path.push(m);
      yield* walk(m, path);
      path.pop();
    }
  }
}

/** Neighbours of a node: the edges value may be an array or a set (anything else: none). */
function neighbours(graph: RegoObject, node: Value): readonly Value[] {
  const edges = graph.get(node);
  return edges === undefined || edges === null ? [] : Array.isArray(edges) || edges instanceof RegoSet ? elements(edges) : [];
}

function reachable(graph: RegoObject, initial: Value): RegoSet {
  const out = new RegoSet();
  const queue = [...elements(initial)];
  while (queue.length) {
    const node = queue.shift()!;
    if (out.has(node) || !graph.has(node)) continue;
    out.add(node);
    queue.push(...neighbours(graph, node));
  }
  return out;
}

function edgeCount(edges: Value): number {
  return Array.isArray(edges) ? edges.length : edges instanceof RegoSet ? edges.size : 0;
}

/** Paths from each initial node until a node without edges, a node outside the graph, or a cycle. */
function reachablePaths(graph: RegoObject, initial: Value): RegoSet {
  const out = new RegoSet();
  const build = (root: Value, path: Value[], reached: ReadonlySet<string>): void => {
    const edges = graph.get(root);
    if (edges === undefined) {
      out.add(path);
      return;
    }
    const here = [...path, root];
    if (edgeCount(edges) === 0) {
      out.add(here);
      return;
    }
    const seen = new Set(reached).add(keyOf(root));
    for (const n of neighbours(graph, root)) {
      if (seen.has(keyOf(n))) out.add(here);
      else build(n, here, seen);
    }
  };
  for (const node of elements(initial)) {
    const edges = graph.get(node);
    if (edges === undefined) continue;
    if (edgeCount(edges) >= 1) for (const n of neighbours(graph, node)) build(n, [node], new Set([keyOf(node)]));
    else out.add([node]);
  }
  return out;
}

const nodes = T.union(anyArray, anySet);

export const graphs = defineBuiltins(
  {
    name: 'walk',
    relation: true,
    decl: T.fn([T.any], T.tuple(anyArray, T.any)),
    impl: ([v]) => walk(v!, []),
  },
  {
    name: 'graph.reachable',
    decl: T.fn([T.objectOf(T.any, nodes), nodes], anySet),
    impl: ([g, initial]) => reachable(obj(g!), initial!),
  },
  {
    name: 'graph.reachable_paths',
    decl: T.fn([T.objectOf(T.any, nodes), nodes], T.setOf(anyArray)),
    impl: ([g, initial]) => reachablePaths(obj(g!), initial!),
  },
);

