#!/usr/bin/env node
// Fails on an import cycle anywhere in packages/ (and firmware-sim/, examples/): reads every
// TypeScript and JavaScript source (not node_modules, not dist), takes its imports, re-exports
// and dynamic imports (type-only ones included: a cycle of types is still two modules that
// cannot be understood apart), resolves relative specifiers and the workspace packages'
// `@tensormine/*` exports to files, and lists every strongly connected group of files. The
// groups named in ALLOWED are known and scheduled for removal; a group that is not, or an
// allowed one that has grown or is gone, fails (so that the list never goes stale).
// Run by `npm run check:cycles` and CI. Exit 1 with the cycles found.
import { importsOf, rel, resolveSpecifier, sourceFiles } from './lib/workspace-imports.mjs';

/**
 * Known cycles, each with the issue that removes it (none now: issue 24 removed the last, the
 * storage repositories'). A group must match exactly (its files, sorted): a smaller or larger
 * group is a change to look at, not an allowed cycle.
 */
const ALLOWED = [
  // { reason: 'what the cycle is: removed by issue N', files: ['packages/a/src/x.ts', 'packages/a/src/y.ts'] },
];

const graph = new Map();
for (const file of sourceFiles()) {
  const targets = new Set();
  for (const specifier of importsOf(file)) {
    const target = resolveSpecifier(file, specifier);
    if (target !== undefined && target !== file) targets.add(target);
  }
  graph.set(file, targets);
}

// Tarjan's strongly connected components, iteratively (no recursion limit on deep chains).
const index = new Map();
const low = new Map();
const onStack = new Set();
const stack = [];
const groups = [];
let counter = 0;
for (const start of graph.keys()) {
  if (index.has(start)) continue;
  const work = [{ node: start, edges: [...(graph.get(start) ?? [])], i: 0 }];
  index.set(start, counter);
  low.set(start, counter++);
  stack.push(start);
  onStack.add(start);
  while (work.length > 0) {
    const frame = work.at(-1);
    if (frame.i < frame.edges.length) {
      const next = frame.edges[frame.i++];
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        index.set(next, counter);
        low.set(next, counter++);
        stack.push(next);
        onStack.add(next);
        work.push({ node: next, edges: [...graph.get(next)], i: 0 });
      } else if (onStack.has(next)) {
        low.set(frame.node, Math.min(low.get(frame.node), index.get(next)));
      }
      continue;
    }
    work.pop();
    const parent = work.at(-1);
    if (parent !== undefined) low.set(parent.node, Math.min(low.get(parent.node), low.get(frame.node)));
    if (low.get(frame.node) === index.get(frame.node)) {
      const group = [];
      let member;
      do {
        member = stack.pop();
        onStack.delete(member);
        group.push(member);
      } while (member !== frame.node);
      if (group.length > 1) groups.push(group);
    }
  }
}

/** One cycle through a group, as a readable chain: a.ts -> b.ts -> a.ts. */
function cycleIn(group) {
  const members = new Set(group);
  const first = [...group].sort()[0];
  const previous = new Map([[first, undefined]]);
  const queue = [first];
  while (queue.length > 0) {
    const node = queue.shift();
    for (const next of graph.get(node)) {
      if (!members.has(next)) continue;
      if (next === first) {
        const chain = [first];
        for (let at = node; at !== undefined && at !== first; at = previous.get(at)) chain.splice(1, 0, at);
        return [...chain, first];
      }
      if (!previous.has(next)) {
        previous.set(next, node);
        queue.push(next);
      }
    }
  }
  return group;
}

const problems = [];
const seen = new Set();
for (const group of groups) {
  const files = group.map(rel).sort();
  const allowed = ALLOWED.find(
    (a) => a.files.length === files.length && a.files.every((f, i) => f === files[i]),
  );
  if (allowed !== undefined) {
    seen.add(allowed);
    continue;
  }
  problems.push(
    `import cycle: ${cycleIn(group).map(rel).join(' -> ')}${files.length > 2 ? `\n  (the cycle's group: ${files.join(', ')})` : ''}`,
  );
}
for (const allowed of ALLOWED) {
  if (!seen.has(allowed)) {
    problems.push(
      `scripts/check-cycles.mjs: the allowed cycle "${allowed.reason}" is gone or changed: remove it from ALLOWED (${allowed.files.join(', ')})`,
    );
  }
}

if (problems.length > 0) {
  console.error(problems.join('\n'));
  process.exit(1);
}
console.log(
  `no import cycle in ${graph.size} files${ALLOWED.length > 0 ? ` (besides ${ALLOWED.length} known: ${ALLOWED.map((a) => a.reason).join('; ')})` : ''}`,
);
