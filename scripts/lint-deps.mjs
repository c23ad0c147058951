#!/usr/bin/env node
// Import boundaries (npm run lint:deps): one dependency-cruiser pass over src/ that checks
//   1. the file-level rules of .dependency-cruiser.cjs (layers, no-circular, no-orphans, ...), and
//   2. cycles between areas: every src/<folder>/ and src/modules/<area>/ (sub-folders included, so src/jobs
//      holds src/jobs/handlers) is one node; files directly in src/ or src/modules/ are nodes of their own.
//      Two areas that import each other, directly or round a longer loop, are one area in disguise.
// dependency-cruiser's own `scope: "folder"` rules count each folder together with all its sub-folders and
// also as a folder of its own (src/modules is every area at once), so one loop is reported many times
// over, partly through folders no file of the loop is in; hence this collapse to areas.
// Usage: node scripts/lint-deps.mjs [--runtime-only] [paths...]   (default path: src)
// Exit code: 0 when both are clean, 1 otherwise.
import { cruise, format } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const CONFIG = './.dependency-cruiser.cjs';
const args = process.argv.slice(2);
/** --runtime-only: leave `import type` out of the area graph (by default a type is a dependency too). */
const RUNTIME_ONLY = args.includes('--runtime-only');
const roots = args.filter((arg) => !arg.startsWith('--'));
const ROOTS = roots.length > 0 ? roots : ['src'];
const AREA = /^src\/(?:modules\/[^/]+|(?!modules\/)[^/]+)\//;

/**
 * The area a file belongs to: its folder under src/ (src/modules/<area>/ for modules), or the file itself.
 * An area's routes (`*.routes.ts`) are its HTTP edge, a node of their own (`<area>#routes`): the HTTP
 * layer may know the services it serves (src/http → the composition root → the areas), and the routes
 * use the HTTP layer, so counting them with their area would make every area a loop through src/http.
 */
const areaOf = (path) => {
  const area = AREA.exec(path)?.[0].replace(/\/$/, '') ?? path;
  return area !== path && path.endsWith('.routes.ts') ? `${area}#routes` : area;
};

/** Tarjan: the strongly connected components of a graph given as Map<node, Set<node>>. */
function stronglyConnected(graph) {
  let next = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const visit = (v) => {
    index.set(v, next);
    low.set(v, next);
    next++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      components.push(component.sort());
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  return components;
}

const options = await extractDepcruiseOptions(CONFIG);
const tsConfigFile = options.ruleSet?.options?.tsConfig?.fileName;
const { output: result } = await cruise(ROOTS, options, {}, { tsConfig: tsConfigFile ? extractTSConfig(tsConfigFile) : {} });

// 1. The rules of the configuration, reported as `depcruise --output-type err` does.
const rules = await format(result, { outputType: 'err' });
process.stdout.write(rules.output);

// 2. Cycles between areas.
const graph = new Map();
/** `from area → to area` → the imports that make that edge. */
const witnesses = new Map();
for (const module of result.modules) {
  if (!module.source.startsWith('src/')) continue;
  const from = areaOf(module.source);
  if (!graph.has(from)) graph.set(from, new Set());
  for (const dependency of module.dependencies) {
    if (!dependency.resolved.startsWith('src/')) continue;
    if (RUNTIME_ONLY && dependency.dependencyTypes.includes('type-only')) continue;
    const to = areaOf(dependency.resolved);
    if (to === from) continue;
    graph.get(from).add(to);
    const key = `${from} → ${to}`;
    if (!witnesses.has(key)) witnesses.set(key, []);
    const typeOnly = dependency.dependencyTypes.includes('type-only') ? ' (type-only)' : '';
    witnesses.get(key).push(`${module.source} → ${dependency.resolved}${typeOnly}`);
  }
}

/** The shortest path from `start` to `goal` inside `members`, as a list of nodes (both ends included). */
function shortestPath(start, goal, members) {
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    if (v === goal) break;
    for (const w of [...graph.get(v)].sort()) {
      if (members.has(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  const path = [];
  for (let v = goal; v !== null; v = previous.get(v)) path.unshift(v);
  return path;
}

// Each tangle of areas (a strongly connected component) is reported as the distinct shortest loops through
// its edges, each loop with the imports that make it: break every loop and the tangle is gone.
const tangles = stronglyConnected(graph).filter((component) => component.length > 1);
const loops = new Map();
for (const areas of tangles) {
  const members = new Set(areas);
  for (const from of areas) {
    for (const to of graph.get(from)) {
      if (!members.has(to)) continue;
      const loop = [from, ...shortestPath(to, from, members).slice(0, -1)];
      const first = loop.indexOf([...loop].sort()[0]);
      const rotated = [...loop.slice(first), ...loop.slice(0, first)];
      loops.set(rotated.join(' → '), rotated);
    }
  }
}
const MAX_WITNESSES = 3;
const sortedLoops = [...loops.values()].sort((a, b) => a.length - b.length || a.join().localeCompare(b.join()));
const lines = [''];
for (const loop of sortedLoops) {
  lines.push(`  error no-area-cycle: ${[...loop, loop[0]].join(' → ')}`);
  loop.forEach((from, i) => {
    const found = witnesses.get(`${from} → ${loop[(i + 1) % loop.length]}`);
    for (const witness of found.slice(0, MAX_WITNESSES)) lines.push(`      ${witness}`);
    if (found.length > MAX_WITNESSES) lines.push(`      (and ${found.length - MAX_WITNESSES} more)`);
  });
}
if (sortedLoops.length > 0) {
  lines.push(
    '',
    `x ${sortedLoops.length} import loop(s) between areas (src/<folder>, src/modules/<area>) in ${tangles.length} tangle(s): ` +
      tangles.map((areas) => `{${areas.join(', ')}}`).join(' ') +
      '. Break each loop so that the dependency between the areas runs one way.',
    '',
  );
} else lines.push('✔ no import loops between areas (src/<folder>, src/modules/<area>).', '');
process.stdout.write(lines.join('\n'));

process.exitCode = rules.exitCode > 0 || sortedLoops.length > 0 ? 1 : 0;
