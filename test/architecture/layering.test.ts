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
    for (const file of sources('server/crypto')) {
      for (const imp of importsOf(file)) if (!imp.startsWith('server/crypto/') && !imp.startsWith('server/config')) bad.push(`${file} → ${imp}`);
    }
    expect(bad).toEqual([]);
  });

  it('rest/ never imports the process shell', () => {
    const bad: string[] = [];
    for (const file of sources('rest')) for (const imp of importsOf(file)) if (isShell(imp)) bad.push(`${file} → ${imp}`);
    expect(bad).toEqual([]);
  });
});
