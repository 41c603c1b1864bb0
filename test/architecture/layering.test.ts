// docs/architecture.md "The floors": imports run one way, down from the process to the ground:
//   server/ (the process) → the doors (rest/, dav/, mcp/, app/, console/) → client/ (the typed
//   client) → routers/ (procedures and all domain logic) → db/ → core/ (imports nothing of ours).
// A file may import its own floor and the floors below it, never a floor above; a door never
// imports another door (server/ composes them). Type-only imports count. No two files may import
// each other, directly or through others (a circle). Every failure names the files.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  if (!existsSync(path.join(root, dir))) return out;
  for (const name of readdirSync(path.join(root, dir))) {
    const rel = path.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (/\.(ts|tsx)$/.test(name) && !name.endsWith('.d.ts')) out.push(rel);
  }
  return out;
}

/**
 * Every project module a source text imports (static, type-only, side-effect, re-export and
 * dynamic), as a path from the repository root. Exported for the test's own check below.
 */
export function importsIn(file: string, text: string): string[] {
  const out: string[] = [];
  const add = (spec: string) => out.push(path.normalize(path.join(path.dirname(file), spec)).replace(/\.js$/, '.ts'));
  // `import … from`, `import type … from`, `export … from` (the clause may span lines).
  for (const m of text.matchAll(/(?:^|[\n;])\s*(?:import|export)\s[^'";]*?\sfrom\s*['"](\.{1,2}\/[^'"]+)['"]/g)) add(m[1]!);
  // `import './x.js'` (side effect) and `import('./x.js')` (dynamic).
  for (const m of text.matchAll(/(?:^|[\n;])\s*import\s*['"](\.{1,2}\/[^'"]+)['"]/g)) add(m[1]!);
  for (const m of text.matchAll(/\bimport\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g)) add(m[1]!);
  return out;
}
const importsOf = (file: string) => importsIn(file, readFileSync(path.join(root, file), 'utf8'));

/** The floors, lowest first; folders on one floor are doors and may not import each other. */
const FLOORS: string[][] = [['core'], ['db'], ['routers'], ['client'], ['rest', 'dav', 'mcp', 'app', 'console'], ['server']];
const floorOf = (file: string): { level: number; folder: string } | null => {
  const folder = file.split(path.sep)[0]!;
  const level = FLOORS.findIndex((f) => f.includes(folder));
  return level < 0 ? null : { level, folder };
};

/** What is wrong with `file` importing `imp`, or null. */
export function upward(file: string, imp: string): string | null {
  const from = floorOf(file);
  const to = floorOf(imp);
  if (!from) return null;
  if (!to) return `${file} → ${imp} (outside the floors)`;
  if (to.level > from.level) return `${file} → ${imp} (${to.folder}/ is above ${from.folder}/)`;
  if (to.level === from.level && to.folder !== from.folder) return `${file} → ${imp} (a door importing another door)`;
  return null;
}

const ALL = FLOORS.flat().flatMap(sources);

/** Circles among `files` (strongly connected components of two or more files, or a self-import). */
export function circles(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('layering', () => {
  it('finds every kind of import it checks, type-only and multi-line ones included', () => {
    const text = [
      "import type { Deps } from '../routers/deps.js';",
      "import {\n  a,\n  b,\n} from '../db/client.js';",
      "export { x } from './x.js';",
      "import './side.js';",
      "const m = await import('../rest/v1.js');",
    ].join('\n');
    expect(importsIn('core/file.ts', text)).toEqual(['routers/deps.ts', 'db/client.ts', 'core/x.ts', 'core/side.ts', 'rest/v1.ts']);
    expect(importsOf('routers/trpc.ts')).toContain('routers/middleware/idempotency.ts');
    for (const folder of ['server', 'rest', 'client', 'app', 'routers', 'db', 'core']) expect(sources(folder).length, folder).toBeGreaterThan(0);
  });

  it('flags an import that runs up or sideways, and a circle (so the checks below can fail)', () => {
    expect(upward('core/config.ts', 'db/client.ts')).toMatch(/core\/config\.ts → db\/client\.ts \(db\/ is above core\/\)/);
    expect(upward('db/paging.ts', 'routers/deps.ts')).toMatch(/above/);
    expect(upward('routers/trpc.ts', 'rest/v1.ts')).toMatch(/above/);
    expect(upward('rest/v1.ts', 'server/app.ts')).toMatch(/above/);
    expect(upward('rest/v1.ts', 'dav/propfind.ts')).toMatch(/another door/);
    expect(upward('server/app.ts', 'core/config.ts')).toBeNull();
    expect(upward('rest/v1.ts', 'rest/send.ts')).toBeNull();
    const g = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', ['a.ts']],
    ]);
    expect(circles(g)).toEqual([['a.ts', 'b.ts', 'c.ts']]);
    expect(circles(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).toEqual([]);
  });

  it('every import runs down the floors (core ← db ← routers ← client ← doors ← server), never up or between doors', () => {
    const bad = ALL.flatMap((file) => importsOf(file).map((imp) => upward(file, imp)).filter((x): x is string => x !== null));
    expect(bad).toEqual([]);
  });

  it('core/ imports nothing of the project but core/', () => {
    const bad = sources('core').flatMap((file) => importsOf(file).filter((imp) => !imp.startsWith(`core${path.sep}`)).map((imp) => `${file} → ${imp}`));
    expect(bad).toEqual([]);
  });

  it('no circles between files', () => {
    const graph = new Map(ALL.map((f) => [f, importsOf(f)]));
    expect(circles(graph).map((c) => `a circle: ${c.join(', ')}`)).toEqual([]);
  });

  it('core/net (the outbound door) imports only core/net and core/config', () => {
    const bad: string[] = [];
    for (const file of sources('core/net')) {
      for (const imp of importsOf(file)) if (!imp.startsWith('core/net/') && imp !== 'core/config.ts') bad.push(`${file} → ${imp}`);
    }
    expect(sources('core/net').length).toBeGreaterThan(0);
    expect(bad).toEqual([]);
  });

  // docs/architecture.md "One door for outbound HTTP": only core/net opens outbound connections.
  // (client/ is the `cairn/client` package: it runs in the API consumer's process, not the server;
  // console/ and app/ run in the browser.)
  const OUTBOUND: [string, RegExp][] = [
    ['global fetch', /(?<![.\w])fetch\s*\(/],
    ['http(s).request/get', /\bhttps?\.(request|get)\s*\(|\)\s*\.request\s*\(/],
    ['net/tls connect', /\b(net|tls)\.(connect|createConnection)\s*\(/],
    ['an outbound module', /from\s+'(node:)?(https|tls|dgram|http2|undici)'/],
    ['request/get/connect imported from node:http or node:net', /import\s*\{[^}]*\b(request|get|connect|createConnection|Socket)\b[^}]*\}\s*from\s+'(node:)?(http|net)'/],
    ['new WebSocket or Socket', /new\s+(WebSocket|net\.Socket|Socket)\s*\(/],
  ];
  const outboundCalls = (file: string) => {
    const text = readFileSync(path.join(root, file), 'utf8');
    return OUTBOUND.filter(([, re]) => re.test(text)).map(([what]) => `${file}: ${what}`);
  };

  it('finds the outbound calls of the door itself (so the scan below can fail)', () => {
    expect(outboundCalls('core/net/fetch.ts')).toEqual(['core/net/fetch.ts: http(s).request/get', 'core/net/fetch.ts: an outbound module']);
  });

  it('nothing outside core/net opens an outbound connection', () => {
    const files = [...['server', 'rest', 'dav', 'mcp', 'routers', 'db', 'core'].flatMap(sources), ...sources('scripts').filter((f) => !f.startsWith('scripts/bench/'))];
    expect(files.filter((f) => !f.startsWith('core/net/')).flatMap(outboundCalls)).toEqual([]);
  });
});
