// Issue 33 item 5 (docs/operations.md "systemd", "Containers"): the deployment files in deploy/
// are real files that are checked, not text in the docs. The systemd unit passes
// `systemd-analyze verify` where systemd-analyze exists (skipped, with the reason, where it does
// not). The Dockerfile gets a structural check, the documented stand-in for a linter (hadolint is
// not in the npm registry as a linter; the `hadolint` package there is a wrapper that fetches a
// binary): two stages, the runtime built from the first stage's output, a non-root USER, a
// HEALTHCHECK on /healthz, DATA_DIR in a VOLUME, an exec-form CMD, and no secret baked in.
// (`npx dockerfilelint deploy/Dockerfile`, a linter from the npm registry, also reports no issue:
// docs/operations.md "Containers".)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '..', '..');
const read = (p: string) => readFileSync(path.join(root, p), 'utf8');

type Instr = { op: string; args: string; line: number };

/** Dockerfile instructions: comments dropped, `\` continuations joined. */
export function parseDockerfile(text: string): Instr[] {
  const out: Instr[] = [];
  let buf = '';
  let start = 0;
  text.split('\n').forEach((raw, i) => {
    const line = raw.trim();
    if (!buf && (line === '' || line.startsWith('#'))) return;
    if (!buf) start = i + 1;
    if (line.endsWith('\\')) {
      buf += line.slice(0, -1) + ' ';
      return;
    }
    buf += line;
    const m = /^(\S+)\s*(.*)$/.exec(buf)!;
    out.push({ op: m[1]!.toUpperCase(), args: m[2]!, line: start });
    buf = '';
  });
  return out;
}

/** Problems a reviewer would flag in a production Dockerfile; [] when it is sound. */
export function dockerfileProblems(text: string): string[] {
  const problems: string[] = [];
  const all = parseDockerfile(text);
  const froms = all.map((x, i) => ({ ...x, i })).filter((x) => x.op === 'FROM');
  if (froms.length < 2) problems.push('not multi-stage: one FROM');
  for (const f of froms) if (!/:[\w.-]+/.test(f.args.split(/\s+/)[0]!) || /:latest\b/.test(f.args)) problems.push(`line ${f.line}: FROM without a pinned tag`);
  const final = all.slice(froms[froms.length - 1]?.i ?? 0);
  if (!final.some((x) => x.op === 'COPY' && /--from=/.test(x.args))) problems.push('the final stage does not copy from a build stage');
  const users = final.filter((x) => x.op === 'USER');
  const user = users[users.length - 1]?.args.trim();
  if (!user || /^(root|0)(:|$)/.test(user)) problems.push('the final stage runs as root (no USER, or USER root)');
  const hc = final.find((x) => x.op === 'HEALTHCHECK');
  if (!hc || !/\/healthz/.test(hc.args) || !/CMD\s+\[/.test(hc.args)) problems.push('no HEALTHCHECK (exec form) on /healthz');
  const env = final.filter((x) => x.op === 'ENV').map((x) => x.args).join(' ');
  const dataDir = /\bDATA_DIR=(\S+)/.exec(env)?.[1];
  const volumes = final.filter((x) => x.op === 'VOLUME').map((x) => x.args).join(' ');
  if (!dataDir || !volumes.includes(dataDir)) problems.push(`DATA_DIR (${dataDir ?? 'unset'}) is not a VOLUME`);
  const cmd = final.filter((x) => x.op === 'CMD' || x.op === 'ENTRYPOINT');
  if (!cmd.length || !cmd.every((c) => c.args.trim().startsWith('['))) problems.push('CMD/ENTRYPOINT not in exec form (a shell would swallow SIGTERM)');
  for (const x of all) {
    if ((x.op === 'ENV' || x.op === 'ARG') && /\b\w*(MASTER_KEY|SECRET|PASSWORD|TOKEN)\w*=/i.test(x.args)) problems.push(`line ${x.line}: a secret in ${x.op}`);
    if ((x.op === 'COPY' || x.op === 'ADD') && /master\.key|\.db\b|\.env\b/.test(x.args)) problems.push(`line ${x.line}: copies data or secrets into the image`);
    if (x.op === 'ADD') problems.push(`line ${x.line}: ADD (use COPY)`);
    if (x.op === 'RUN' && /\bcurl\b.*\|\s*(ba)?sh|\bwget\b.*\|\s*(ba)?sh/.test(x.args)) problems.push(`line ${x.line}: pipes a download into a shell`);
  }
  return problems;
}

describe('deploy/Dockerfile', () => {
  const text = read('deploy/Dockerfile');

  it('passes the structural check', () => {
    expect(dockerfileProblems(text)).toEqual([]);
  });

  it('the check fails on what it is there to catch', () => {
    expect(dockerfileProblems('FROM node:20\nCMD node bin/cairn.js\n')).toEqual(
      expect.arrayContaining(['not multi-stage: one FROM', 'the final stage runs as root (no USER, or USER root)', 'no HEALTHCHECK (exec form) on /healthz', 'DATA_DIR (unset) is not a VOLUME', 'CMD/ENTRYPOINT not in exec form (a shell would swallow SIGTERM)']),
    );
    expect(dockerfileProblems(text.replace('USER node', 'USER root'))).toEqual(['the final stage runs as root (no USER, or USER root)']);
    expect(dockerfileProblems(text.replace('VOLUME ["/data"]', ''))).toEqual(['DATA_DIR (/data) is not a VOLUME']);
    expect(dockerfileProblems(text.replace('ENV NODE_ENV=production', 'ENV CAIRN_MASTER_KEY=00 NODE_ENV=production'))).toEqual([expect.stringMatching(/a secret in ENV/)]);
  });

  it('the runtime stage copies what the package ships (package.json "files") and the production dependencies', () => {
    const files = [...new Set((JSON.parse(read('package.json')) as { files: string[] }).files.map((f) => f.split('/**')[0]!).filter((f) => !/\.md$/.test(f)))];
    const final = parseDockerfile(text).slice(parseDockerfile(text).map((x) => x.op).lastIndexOf('FROM'));
    const copied = final.filter((x) => x.op === 'COPY').map((x) => /\/opt\/cairn\/(\S+)/.exec(x.args)?.[1]);
    expect(copied.sort()).toEqual([...files, 'node_modules', 'package.json'].sort());
  });

  it('the build context leaves out data, keys and local builds', () => {
    const ignore = read('deploy/Dockerfile.dockerignore').split('\n').map((l) => l.trim());
    for (const p of ['node_modules', 'dist', 'data', '**/master.key', '**/*.db']) expect(ignore).toContain(p);
  });
});

describe('deploy/compose.yaml', () => {
  it('builds deploy/Dockerfile and keeps /data in a named volume', () => {
    const text = read('deploy/compose.yaml');
    expect(text).toMatch(/dockerfile: deploy\/Dockerfile/);
    expect(text).toMatch(/- cairn-data:\/data/);
    expect(text).toMatch(/^volumes:\n {2}cairn-data:/m);
    expect(text).not.toMatch(/MASTER_KEY/);
  });
});

describe('deploy/cairn.service', () => {
  const unit = read('deploy/cairn.service');
  const analyze = spawnSync('sh', ['-c', 'command -v systemd-analyze'], { encoding: 'utf8' }).stdout.trim();

  it.skipIf(!analyze)('passes `systemd-analyze verify` (skipped where systemd-analyze is absent)', () => {
    const r = spawnSync(analyze, ['verify', path.join(root, 'deploy/cairn.service')], { encoding: 'utf8' });
    expect(r.stderr + r.stdout).toBe('');
    expect(r.status).toBe(0);
  });

  it.skipIf(!analyze)('the verification fails on a broken unit (so the check above can fail)', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-unit-'));
    try {
      const bad = path.join(dir, 'cairn.service');
      writeFileSync(bad, unit.replace('Restart=on-failure', 'Restart=sometimes'));
      const r = spawnSync(analyze, ['verify', bad], { encoding: 'utf8' });
      expect(r.stderr).toMatch(/Failed to parse service restart specifier/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('runs bin/cairn.js with npm start\'s node flags, as an unprivileged user, private files, data in a state directory', () => {
    const start = (JSON.parse(read('package.json')) as { scripts: { start: string } }).scripts.start;
    const flags = start.match(/--[\w-]+=\d+/g)!;
    const exec = /^ExecStart=(.*)$/m.exec(unit)![1]!;
    for (const f of flags) expect(exec).toContain(f);
    expect(exec).toMatch(/ \/opt\/cairn\/bin\/cairn\.js$/);
    expect(unit).toMatch(/^User=cairn$/m);
    expect(unit).toMatch(/^UMask=0077$/m);
    expect(unit).toMatch(/^StateDirectory=cairn\b/m);
    expect(unit).toMatch(/DATA_DIR=\/var\/lib\/cairn\b/);
  });
});
