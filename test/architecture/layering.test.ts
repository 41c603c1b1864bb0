// docs/architecture.md "Layers": imports run one way, from the process shell (server/main, app,
// cli, jobs) to the HTTP adapters (rest/) to the procedures (routers/) to the models and db/ to
// crypto and config. A module that imports a floor above it fails here.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(path.join(root, dir))) {
    const rel = path.join(dir, name);
    if (statSync(path.join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

/** Every project module a file imports, as a path from the repository root. */
function importsOf(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s+'(\.[^']+)'/g)) {
    out.push(path.normalize(path.join(path.dirname(file), m[1]!)).replace(/\.js$/, '.ts'));
  }
  for (const m of text.matchAll(/import\(\s*'(\.[^']+)'\s*\)/g)) {
    out.push(path.normalize(path.join(path.dirname(file), m[1]!)).replace(/\.js$/, '.ts'));
  }
  return out;
}

const SHELL = ['server/app.ts', 'server/main.ts', 'server/cli.ts'];
const isShell = (f: string) => SHELL.includes(f) || f.startsWith('server/jobs/');

describe('layering', () => {
  it('finds the imports it checks', () => {
    expect(importsOf('routers/trpc.ts')).toContain('routers/middleware/idempotency.ts');
  });

  it('no module in db/ or routers/ imports rest/ or the process shell', () => {
    const bad: string[] = [];
    for (const file of [...sources('db'), ...sources('routers')]) {
      for (const imp of importsOf(file)) if (imp.startsWith('rest/') || isShell(imp)) bad.push(`${file} → ${imp}`);
    }
    expect(bad).toEqual([]);
  });

  it('db/ imports nothing from routers/, and crypto imports neither', () => {
    const bad: string[] = [];
    for (const file of sources('db')) for (const imp of importsOf(file)) if (imp.startsWith('routers/')) bad.push(`${file} → ${imp}`);
    for (const file of sources('core/crypto')) {
      for (const imp of importsOf(file)) if (!imp.startsWith('core/crypto/') && !imp.startsWith('core/config')) bad.push(`${file} → ${imp}`);
    }
    expect(bad).toEqual([]);
  });

  it('rest/ never imports the process shell', () => {
    const bad: string[] = [];
    for (const file of sources('rest')) for (const imp of importsOf(file)) if (isShell(imp)) bad.push(`${file} → ${imp}`);
    expect(bad).toEqual([]);
  });

  it('core/net (the outbound door) imports only core/net and core/config, never routers/ or rest/', () => {
    const bad: string[] = [];
    for (const file of sources('core/net')) {
      for (const imp of importsOf(file)) if (!imp.startsWith('core/net/') && imp !== 'core/config.ts') bad.push(`${file} → ${imp}`);
    }
    expect(sources('core/net').length).toBeGreaterThan(0);
    expect(bad).toEqual([]);
  });

  // docs/architecture.md "One door for outbound HTTP": only core/net opens outbound connections.
  // (client/ is the `cairn/client` package: it runs in the API consumer's process, not the server.)
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
    const files = [...sources('server'), ...sources('routers'), ...sources('rest'), ...sources('db'), ...sources('scripts').filter((f) => !f.startsWith('scripts/bench/'))];
    expect(files.filter((f) => !f.startsWith('core/net/')).flatMap(outboundCalls)).toEqual([]);
  });
});
