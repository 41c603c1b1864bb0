// A whole calendar as one iCalendar file (issue 33 item 2: "an .ics export of to-dos reuses the
// CalDAV serialiser"): GET on a calendar collection (dav/get.ts) and `cairn export --format ics`
// (server/cli-export.ts). Each to-do is serialised exactly as GET of its own resource serves it
// (dav/props.ts icsOf → dav/vtodo.ts), then its components are taken into one VCALENDAR with
// ical.js; a VTIMEZONE several items carry is written once. Yielded piece by piece, one to-do
// opened at a time, so a large calendar is never built whole.
import ICAL from 'ical.js';
import type { Deps } from '../routers/deps.js';
import type { Principal } from '../routers/auth/credentials.js';
import { icsOf } from './props.js';
import { listCollections, listMembers, resourceById, type Collection } from './store.js';

const CRLF = '\r\n';

/** The VCALENDAR's opening lines (RFC 5545 §3.6: VERSION and PRODID are required). */
function head(name: string | null): string {
  const cal = new ICAL.Component('vcalendar');
  cal.addPropertyWithValue('version', '2.0');
  cal.addPropertyWithValue('prodid', '-//Cairn//Cairn task server//EN');
  if (name !== null) cal.addPropertyWithValue('x-wr-calname', name);
  const text = cal.toString();
  return text.slice(0, text.lastIndexOf('END:VCALENDAR'));
}

/** The components of the collections' to-dos (checklist items as their subtasks), in order. */
function* components(deps: Deps, p: Principal, collections: readonly Collection[]): Generator<string> {
  const zones = new Set<string>();
  for (const c of collections) {
    for (const m of listMembers(deps, p, c.id)) {
      const dav = m.child ? null : (resourceById(deps, p, m.id)?.dav ?? null);
      const cal = new ICAL.Component(ICAL.parse(icsOf(deps, p, { id: m.id, dav, child: m.child })));
      for (const sub of cal.getAllSubcomponents()) {
        if (sub.name === 'vtimezone') {
          const tzid = String(sub.getFirstPropertyValue('tzid') ?? '');
          if (zones.has(tzid)) continue;
          zones.add(tzid);
        }
        yield sub.toString() + CRLF;
      }
    }
  }
}

/** One calendar (`collection`), or with null every calendar of the account, as one VCALENDAR. */
export function* calendarIcs(deps: Deps, p: Principal, collection: Collection | null): Generator<string> {
  const all = collection ? [collection] : listCollections(deps, p);
  yield head(collection ? collection.name : 'Cairn');
  yield* components(deps, p, all);
  yield 'END:VCALENDAR' + CRLF;
}
