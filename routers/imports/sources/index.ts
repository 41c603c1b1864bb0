// The import sources this floor reads (docs/import.md). `.ics` is read by the CalDAV door's
// VTODO mapping (dav/vtodo.ts), which routers/ may not import: the process adds it
// (server/import-ics.ts) where it composes the doors.
import { AppError } from '../../../core/errors.js';
import type { ImportPlan, ImportSource } from '../plan.js';
import { cairnPlan } from './cairn.js';
import { todoistPlan } from './todoist.js';
import { thingsPlan } from './things.js';

export type PlanOptions = {
  /** The file's name without its extension: a Todoist CSV's project name. */
  name?: string | undefined;
};
export type Planner = (body: Buffer, opts: PlanOptions) => ImportPlan;
export type Planners = Partial<Record<ImportSource, Planner>>;

/** A body that is not UTF-8 text is refused before it is read as JSON or CSV. */
function utf8(body: Buffer, what: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    throw new AppError('validation_failed', `The file is not UTF-8 text; ${what}.`);
  }
}

export const PLANNERS: Planners = {
  cairn: (body) => cairnPlan(utf8(body, 'a Cairn export is JSON')),
  todoist: (body, opts) => todoistPlan(utf8(body, 'a Todoist export is a CSV file'), opts.name ?? 'Todoist'),
  things: (body) => thingsPlan(body),
};

export function planFor(planners: Planners, source: ImportSource, body: Buffer, opts: PlanOptions): ImportPlan {
  const planner = planners[source];
  if (!planner) throw new AppError('validation_failed', `This server cannot read ${source} files.`, { pointer: '/source' });
  return planner(body, opts);
}
