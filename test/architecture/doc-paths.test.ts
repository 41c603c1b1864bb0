// Issue 27: every path of this repository that the README and docs/ name still exists, so a move
// that forgets a doc fails here. A path is a top-level folder of the project followed by at least
// one more segment (`routers/todos/model.ts`, `core/crypto/`); folders still to come are named
// without a segment after them.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const TOP = ['server', 'core', 'routers', 'db', 'rest', 'client', 'console', 'scripts', 'test', 'bin', 'docs', 'patches', 'dav', 'mcp', 'app', 'packages'];
const PATH = new RegExp(`(?<![\\w./+-])((?:${TOP.join('|')})/[\\w./+-]*[\\w/+])`, 'g');

export function pathsIn(text: string): string[] {
  return [...text.matchAll(PATH)].map((m) => m[1]!);
}

describe('paths named in the README and docs/', () => {
  it('finds the paths it checks', () => {
    expect(pathsIn('see `routers/todos/model.ts` and core/crypto/, not dist/server/main.js or dav/')).toEqual(['routers/todos/model.ts', 'core/crypto/']);
  });

  it('all exist', () => {
    const docs = ['README.md', ...readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
    const missing = docs.flatMap((doc) => pathsIn(readFileSync(path.join(root, doc), 'utf8')).filter((p) => !existsSync(path.join(root, p))).map((p) => `${doc}: ${p}`));
    expect(docs.length).toBeGreaterThan(5);
    expect([...new Set(missing)]).toEqual([]);
  });
});
