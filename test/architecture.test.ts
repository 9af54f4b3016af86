import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseSync } from 'oxc-parser';

/**
 * The shape of src/ (docs/architecture.md, "Import rules"): a layer imports only the layers its
 * row of LAYERS names, no two files import each other through a cycle, and no source file is
 * over MAX_LINES lines. Imports are read by a parser (static imports, `export … from`, dynamic
 * `import('…')`), not by a pattern over the text.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const MAX_LINES = 900;

type Layer =
  | 'domain'
  | 'data'
  | 'queries'
  | 'store'
  | 'ingest'
  | 'access'
  | 'events'
  | 'mcp'
  | 'http'
  | 'jobs'
  | 'cli'
  | 'service'
  | 'scale'
  | 'config'
  | 'metrics';

interface Rule {
  /** The layers this one may import, besides itself and the leaf utilities (UTILITIES). */
  may: readonly Layer[];
  /** May import the store's ports: types named `…Store` from src/store/, nothing else of it. */
  storePorts?: boolean;
  why: string;
}

/** Leaf utilities every layer but domain may import; they import domain at most. */
const UTILITIES: readonly Layer[] = ['config', 'metrics'];

/**
 * What each layer of src/ may import: a folder of src/ is a layer, and so is each file at the top
 * of src/. The arrows of the layout: domain ← data ← queries ← http/mcp; domain ← store ← access ←
 * http; ingest → store; events → data, store, domain; http → events; jobs → ingest, events, data,
 * store; only the server's entry points import http.
 */
const LAYERS: Record<Layer, Rule> = {
  domain: { may: [], why: 'pure types and math: nothing with I/O, no package, no node: module' },
  data: { may: ['domain'], storePorts: true, why: 'the read model, loaded through the store ports' },
  queries: {
    may: ['domain', 'data'],
    storePorts: true,
    why: 'use cases over the read model, history through a store port; no HTTP',
  },
  store: { may: ['domain'], why: 'persistence behind narrow ports; never imports access' },
  ingest: { may: ['domain', 'store'], why: 'sources into the store; adapters take their client' },
  access: { may: ['domain', 'store'], why: 'keys, tiers, limits and quotas over the store; never HTTP' },
  events: { may: ['domain', 'data', 'store'], why: 'risk events: matching, outbox, delivery, stream' },
  mcp: {
    may: ['domain', 'data', 'queries', 'access'],
    why: 'tools that call queries, behind the same access pipeline as the routes',
  },
  http: {
    may: ['domain', 'data', 'queries', 'access', 'store', 'events', 'mcp'],
    why: 'routes over queries and mcp behind access; holds a read-only view of the store',
  },
  jobs: { may: ['domain', 'data', 'store', 'ingest', 'events'], why: 'the job runner and background jobs' },
  scale: {
    may: ['domain', 'store', 'access'],
    why: 'src/scale.ts: picks the embedded or Redis backends for the composition root',
  },
  service: {
    may: ['domain', 'data', 'queries', 'store', 'ingest', 'access', 'events', 'mcp', 'http', 'jobs', 'scale'],
    why: 'src/service.ts: the server entry and composition root, one of the two importers of http',
  },
  cli: {
    may: [
      'domain',
      'data',
      'queries',
      'store',
      'ingest',
      'access',
      'events',
      'mcp',
      'http',
      'jobs',
      'scale',
      'service',
    ],
    why: 'the lrds command, the top: starts the server (the other importer of http)',
  },
  config: { may: ['domain'], why: 'src/config.ts: settings, validated once; a leaf utility' },
  metrics: { may: [], why: 'src/metrics.ts: the Prometheus metrics; a leaf utility' },
};

/** Packages of the HTTP framework: only http and the entry points use them. */
const HTTP_PACKAGES = /^(fastify|fastify-plugin|@fastify\/|@scalar\/)/;
const HTTP_PACKAGE_USERS: readonly Layer[] = ['http', 'service', 'cli'];

/**
 * Breaches being removed as the areas are reorganized. Temporary: each entry must still match a
 * breach (the test fails when one no longer does, naming it), so the list only shrinks. `from`
 * and `to` are a file or a folder (ending in `/`); `typesOnly`: only `import type` statements.
 */
const TEMPORARY_EXCEPTIONS = {
  imports: [] as { from: string; to: string; typesOnly: boolean; why: string }[],
  cycles: [] as { files: string[]; why: string }[],
  /** Files being split, each into files under MAX_LINES. */
  longFiles: [] as string[],
};

/** One import of a file: a file of the repository (`file`) or a package (`pkg`). */
interface Edge {
  from: string;
  file?: string;
  pkg?: string;
  /** Erased before the code runs (`import type`, `export type`): no load-order dependency. */
  erased: boolean;
  /** Every name it imports is a type (`import type { A }`, `import { type A }`). */
  typesOnly: boolean;
  /** The names imported ('*' for a namespace or `export *`). */
  names: string[];
  line: number;
}

/** An import as read from a file's text: what it names (`spec`) and how. */
type Import = Omit<Edge, 'from' | 'file' | 'pkg'> & { spec: string };

/** The imports of a module's text, in the order of the parser's lists. */
function importsOf(path: string, text: string): Import[] {
  const { module, errors } = parseSync(path, text);
  assert.equal(errors.length, 0, `${path}: ${errors.map((e) => e.message).join('; ')}`);
  const lineOf = (pos: number) => text.slice(0, pos).split('\n').length;
  const out: Import[] = [];
  for (const s of module.staticImports) {
    const names = s.entries.map((e) => e.importName.name ?? '*');
    const typesOnly = s.entries.length > 0 && s.entries.every((e) => e.isType);
    const erased = typesOnly && /^import\s+type\s/.test(text.slice(s.start, s.end));
    out.push({ spec: s.moduleRequest.value, erased, typesOnly, names, line: lineOf(s.start) });
  }
  for (const s of module.staticExports) {
    const entries = s.entries.filter((e) => e.moduleRequest !== null);
    const first = entries[0]?.moduleRequest;
    if (!first) continue;
    const typesOnly = entries.every((e) => e.isType);
    const erased = typesOnly && /^export\s+type\s/.test(text.slice(s.start, s.end));
    const names = entries.map((e) => e.importName.name ?? '*');
    out.push({ spec: first.value, erased, typesOnly, names, line: lineOf(s.start) });
  }
  for (const d of module.dynamicImports) {
    const literal = text.slice(d.moduleRequest.start, d.moduleRequest.end);
    const m = /^(['"`])([^'"`$]*)\1$/.exec(literal);
    out.push({
      spec: m ? m[2]! : `<not a literal: ${literal}>`,
      erased: false,
      typesOnly: false,
      names: ['*'],
      line: lineOf(d.start),
    });
  }
  return out;
}

/** Every TypeScript file of src/, as `src/…` paths. */
const FILES = (readdirSync(join(ROOT, 'src'), { recursive: true }) as string[])
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `src/${f.split('\\').join('/')}`)
  .sort();
const TEXT = new Map(FILES.map((f) => [f, readFileSync(join(ROOT, f), 'utf8')]));

const EDGES: Edge[] = [];
const UNCHECKABLE: string[] = [];
for (const from of FILES) {
  for (const i of importsOf(from, TEXT.get(from)!)) {
    const { spec, ...rest } = i;
    if (spec.startsWith('<not a literal')) UNCHECKABLE.push(`${from}:${i.line} import(${spec})`);
    else if (spec.startsWith('.')) {
      const file = relative(ROOT, resolve(ROOT, dirname(from), spec))
        .split('\\')
        .join('/');
      if (!existsSync(join(ROOT, file))) UNCHECKABLE.push(`${from}:${i.line} '${spec}' (no such file)`);
      EDGES.push({ from, file, ...rest });
    } else EDGES.push({ from, pkg: spec, ...rest });
  }
}

/** The layer of a file of src/: its folder, or its name for a file at the top of src/. */
function layerOf(file: string): Layer | null {
  const parts = file.split('/');
  if (parts[0] !== 'src') return null;
  const name = parts.length === 2 ? parts[1]!.replace(/\.ts$/, '') : parts[1]!;
  return Object.hasOwn(LAYERS, name) ? (name as Layer) : null;
}

/** Why an edge breaks the rules, or null when it keeps them. */
function breach(e: Edge): string | null {
  const from = layerOf(e.from)!;
  if (e.pkg !== undefined) {
    if (from === 'domain') return `domain imports '${e.pkg}' (no package, no node: module)`;
    if (HTTP_PACKAGES.test(e.pkg) && !HTTP_PACKAGE_USERS.includes(from)) return `${from} imports ${e.pkg}`;
    return null;
  }
  if (!e.file!.startsWith('src/')) return null; // config/*.json, package.json: data, not a layer
  const to = layerOf(e.file!);
  if (to === null) return `imports ${e.file}, of no layer in LAYERS`;
  if (to === from) return null;
  if (LAYERS[from].may.includes(to)) return null;
  if (UTILITIES.includes(to) && from !== 'domain') return null;
  if (to === 'store' && LAYERS[from].storePorts && e.typesOnly && e.names.every((n) => /Store$/.test(n)))
    return null;
  const what = to === 'store' && LAYERS[from].storePorts ? ` (only its ports, types named …Store)` : '';
  return `${from} may not import ${to}${what}`;
}

const within = (path: string, scope: string) =>
  scope.endsWith('/') ? path.startsWith(scope) : path === scope;

/** Strongly connected components of more than one file (Tarjan), over the runtime imports. */
function cycles(): string[][] {
  const next = new Map<string, string[]>(FILES.map((f) => [f, []]));
  for (const e of EDGES) if (!e.erased && e.file && next.has(e.file)) next.get(e.from)!.push(e.file);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, index.size);
    low.set(v, index.get(v)!);
    stack.push(v);
    onStack.add(v);
    for (const w of next.get(v)!) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || next.get(v)!.includes(v)) found.push(component.sort());
  };
  for (const f of FILES) if (!index.has(f)) visit(f);
  return found;
}

const lineCount = (text: string) => text.split('\n').length - (text.endsWith('\n') ? 1 : 0);

describe('architecture', () => {
  test('the import reader sees every kind of import', () => {
    const found = importsOf(
      'x.ts',
      [
        "import a, { b } from './a.ts';",
        "import type { C } from './c.ts';",
        "import { type D } from './d.ts';",
        "import type from './e.ts';",
        "import './f.ts';",
        "export { g } from './g.ts';",
        "export type { H } from './h.ts';",
        "export * from './i.ts';",
        "const j = await import('./j.ts');",
        'const k = await import(name);',
        "const s = 'import x from \"./not-an-import.ts\"'; // import './nor-this.ts'",
      ].join('\n'),
    );
    const summary = found.map((i) => `${i.spec}${i.erased ? ' erased' : ''}${i.typesOnly ? ' types' : ''}`);
    assert.deepEqual(summary.sort(), [
      './a.ts',
      './c.ts erased types',
      './d.ts types',
      './e.ts',
      './f.ts',
      './g.ts',
      './h.ts erased types',
      './i.ts',
      './j.ts',
      '<not a literal: name>',
    ]);
  });

  test('every file of src/ is in a layer of the table', () => {
    assert.deepEqual(
      FILES.filter((f) => layerOf(f) === null),
      [],
      'a new folder or top-level file of src/ needs its row in LAYERS',
    );
    assert.ok(EDGES.length > 500, `only ${EDGES.length} imports read`);
  });

  test('every import is a literal path to a file that exists', () => {
    assert.deepEqual(UNCHECKABLE, []);
  });

  test('a layer imports only what its row allows', () => {
    const open: string[] = [];
    const used = new Set<number>();
    for (const e of EDGES) {
      const why = breach(e);
      if (why === null) continue;
      const k = TEMPORARY_EXCEPTIONS.imports.findIndex(
        (x) =>
          e.file !== undefined &&
          within(e.from, x.from) &&
          within(e.file, x.to) &&
          (!x.typesOnly || e.erased),
      );
      if (k >= 0) used.add(k);
      else open.push(`${e.from}:${e.line} → ${e.file ?? e.pkg}: ${why}`);
    }
    assert.deepEqual(open, [], 'imports the rules forbid (docs/architecture.md, "Import rules")');
    const stale = TEMPORARY_EXCEPTIONS.imports
      .filter((_, k) => !used.has(k))
      .map((x) => `${x.from} → ${x.to}`);
    assert.deepEqual(stale, [], 'exceptions that no longer apply: remove them from TEMPORARY_EXCEPTIONS');
  });

  test('no import cycle between files of src/', () => {
    const listed = (c: string[]) =>
      TEMPORARY_EXCEPTIONS.cycles.findIndex((x) => [...x.files].sort().join() === c.join());
    const found = cycles();
    assert.deepEqual(
      found.filter((c) => listed(c) < 0).map((c) => c.join(' ↔ ')),
      [],
      'groups of files that import each other (each group holds a cycle)',
    );
    const used = new Set(found.map(listed));
    const stale = TEMPORARY_EXCEPTIONS.cycles.filter((_, k) => !used.has(k)).map((x) => x.files.join(' ↔ '));
    assert.deepEqual(stale, [], 'cycles that no longer exist: remove them from TEMPORARY_EXCEPTIONS');
  });

  test(`no source file of src/ over ${MAX_LINES} lines`, () => {
    const long = FILES.filter((f) => lineCount(TEXT.get(f)!) > MAX_LINES);
    assert.deepEqual(
      long
        .filter((f) => !TEMPORARY_EXCEPTIONS.longFiles.includes(f))
        .map((f) => `${f}: ${lineCount(TEXT.get(f)!)}`),
      [],
    );
    const stale = TEMPORARY_EXCEPTIONS.longFiles.filter((f) => !long.includes(f));
    assert.deepEqual(stale, [], 'files now short enough: remove them from TEMPORARY_EXCEPTIONS');
  });
});
