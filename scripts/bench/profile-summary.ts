// Summarises a V8 .cpuprofile (from `node --cpu-prof`, e.g. `npm run bench -- --cpu-prof`):
// self time by package/file and by function, and inclusive time of the functions you name.
//   npx tsx scripts/bench/profile-summary.ts <file.cpuprofile> [--top 25] [--focus name,name]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import path from 'node:path';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number; endTime: number };

const { values, positionals } = parseArgs({ allowPositionals: true, options: { top: { type: 'string', default: '25' }, focus: { type: 'string' } } });
const file = positionals[0];
if (!file) {
  process.stderr.write('usage: profile-summary.ts <file.cpuprofile> [--top N] [--focus fnA,fnB]\n');
  process.exit(2);
}
const prof = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const top = Number(values.top);

const byId = new Map(prof.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const n of prof.nodes) for (const c of n.children ?? []) parent.set(c, n.id);

const selfUs = new Map<number, number>();
prof.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0)));
const total = [...selfUs.values()].reduce((a, b) => a + b, 0);

/** node_modules/<pkg> or the project-relative file; "(native)" for V8/Node internals. */
function where(url: string): string {
  if (!url) return '(native/V8)';
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return `npm:${m[1]}`;
  if (url.startsWith('node:')) return url;
  const rel = url.replace(/^file:\/\//, '');
  return path.relative(process.cwd(), rel) || rel;
}

function add(map: Map<string, number>, key: string, us: number) {
  map.set(key, (map.get(key) ?? 0) + us);
}

const byPlace = new Map<string, number>();
const byFn = new Map<string, number>();
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const f = n.callFrame;
  add(byPlace, where(f.url), us);
  add(byFn, `${f.functionName || '(anonymous)'} ${where(f.url)}:${f.lineNumber + 1}`, us);
}

const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
const print = (title: string, map: Map<string, number>) => {
  process.stdout.write(`\n${title}\n`);
  for (const [k, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`${pct(us)}  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}\n`);
};

process.stdout.write(`${file}: ${(total / 1e6).toFixed(2)} s sampled\n`);
print('self time by package / file', byPlace);
print('self time by function', byFn);

if (values.focus) {
  // Inclusive time: a sample counts for a function when it is anywhere on the sample's stack.
  const names = values.focus.split(',').map((s) => s.trim());
  const incl = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const fn = byId.get(cur)!.callFrame.functionName;
      if (names.includes(fn) && !seen.has(fn)) {
        seen.add(fn);
        add(incl, fn, us);
      }
    }
  }
  print('inclusive time of focused functions', incl);
}
