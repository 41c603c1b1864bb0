// `cairn import --email <email> --from cairn|todoist|things|ics FILE [--dry-run] [--name NAME]`
// (`npm run cli -- import …`; issue 33 item 3, docs/import.md): reads FILE into a plan and makes it
// through the models (routers/imports/apply.ts), as POST /v1/imports does, but in this process and
// without a job. Progress goes to stderr: a bar redrawn in place on a terminal, a plain line per
// tenth otherwise; the report (JSON) to stdout. It asks for the account's password as every CLI
// command does, opens a session for the run and ends it after.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Deps } from '../routers/deps.js';
import { applyPlan, type ImportReport } from '../routers/imports/apply.js';
import { IMPORT_SOURCES, type ImportSource } from '../routers/imports/plan.js';
import { PLANNERS, planFor } from '../routers/imports/sources/index.js';
import { AppError } from '../core/errors.js';
import { icsPlan } from './import-ics.js';
import { withSession } from './cli-export.js';

export type ImportCommandOptions = {
  source: string;
  file: string;
  dryRun?: boolean | undefined;
  /** A Todoist CSV: the project's name; defaults to the file's name without its extension. */
  name?: string | undefined;
  out?: (line: string) => void;
  /** Where progress goes, and whether it is a terminal (a redrawn bar) or not (plain lines). */
  progress?: { write: (text: string) => void; isTTY: boolean };
};

/** A progress reporter: a bar on a terminal, a line per tenth elsewhere. */
export function progressReporter(sink: { write: (text: string) => void; isTTY: boolean }, label: string): { tick: (done: number, total: number) => void; end: () => void } {
  let lastTenth = -1;
  let drawn = false;
  return {
    tick(done, total) {
      if (!total) return;
      if (sink.isTTY) {
        const width = 30;
        const filled = Math.round((done / total) * width);
        sink.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total}`);
        drawn = true;
        return;
      }
      const tenth = Math.floor((done / total) * 10);
      if (tenth !== lastTenth) {
        lastTenth = tenth;
        sink.write(`${label}: ${done} of ${total} items\n`);
      }
    },
    end() {
      if (drawn) sink.write('\n');
    },
  };
}

export async function importCommand(deps: Deps, email: string, readPassword: (prompt: string) => Promise<string>, opts: ImportCommandOptions): Promise<ImportReport> {
  if (!(IMPORT_SOURCES as readonly string[]).includes(opts.source)) {
    throw new AppError('validation_failed', `--from: one of ${IMPORT_SOURCES.join(', ')}`);
  }
  const source = opts.source as ImportSource;
  // Read and checked before the password is asked: a wrong file should not cost a prompt.
  const body = readFileSync(opts.file);
  if (body.length > deps.config.maxImportBytes) throw new AppError('payload_too_large', `The file is larger than the import limit of ${deps.config.maxImportBytes} bytes (CAIRN_MAX_IMPORT_BYTES).`);
  const plan = planFor({ ...PLANNERS, ics: icsPlan }, source, body, { name: opts.name ?? path.basename(opts.file).replace(/\.[^.]*$/, '') });
  const out = opts.out ?? ((l: string) => process.stdout.write(l + '\n'));
  const sink = opts.progress ?? { write: (t: string) => process.stderr.write(t), isTTY: process.stderr.isTTY === true };
  const password = await readPassword('Password: ');
  return withSession(deps, email, password, async (p) => {
    const bar = progressReporter(sink, opts.dryRun ? 'checking' : 'importing');
    try {
      const report = await applyPlan(deps, p, plan, { dryRun: opts.dryRun ?? false, progress: bar.tick });
      out(JSON.stringify(report, null, 2));
      return report;
    } finally {
      bar.end();
    }
  });
}
