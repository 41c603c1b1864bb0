// MKCALENDAR (RFC 4791 §5.3.1) and extended MKCOL (RFC 5689): a new calendar is a new project (the
// same model as POST /v1/containers), its id the path segment the client chose. Calendar ids are
// UUIDs, which every client we know of picks (Apple, Thunderbird, DAVx⁵); a lowercase UUID becomes
// the project's UPPERCASE id and is found in either case. Another segment is refused (403), as is
// a component set without VTODO (`<C:supported-calendar-component/>`). The body may set the
// display name and Apple's colour.
import { createContainer } from '../routers/containers/model.js';
import { AppError } from '../core/errors.js';
import { DavError, calPrecondition } from './errors.js';
import { STANDALONE } from './paths.js';
import { findCollection } from './store.js';
import { ownPath, write, type DavRequest } from './request.js';
import { NS, child, children, is, parseXml, textOf } from './xml.js';
import { colorOf } from './proppatch.js';

const UUID = /^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$/;

export async function mkcalendar(r: DavRequest, extended: boolean): Promise<void> {
  ownPath(r);
  const { deps, p, path } = r;
  if (path.kind !== 'collection') throw new DavError(403, 'A calendar is made directly inside the calendar home.');
  if (path.collection === STANDALONE || findCollection(deps, p, path.collection)) throw new DavError(405, 'A calendar already has this path.');
  if (!UUID.test(path.collection)) throw new DavError(403, 'A new calendar\'s path segment must be a UUID (it becomes the project id).');
  const body = parseXml(r.body);
  if (body && !is(body, NS.C, 'mkcalendar') && !is(body, NS.D, 'mkcol')) throw new DavError(400, 'The body must be <C:mkcalendar> or <D:mkcol>.');
  let name = 'Calendar';
  let colorHex: string | null = null;
  for (const set of body ? children(body, NS.D, 'set') : []) {
    const prop = child(set, NS.D, 'prop');
    if (!prop) continue;
    const dn = child(prop, NS.D, 'displayname');
    if (dn && textOf(dn).trim()) name = textOf(dn).trim().slice(0, 256);
    const color = child(prop, NS.A, 'calendar-color');
    if (color) colorHex = colorOf(textOf(color));
    const comps = child(prop, NS.C, 'supported-calendar-component-set');
    if (comps && !children(comps, NS.C, 'comp').some((c) => (c.getAttribute('name') ?? '').toUpperCase() === 'VTODO')) {
      throw calPrecondition(403, 'supported-calendar-component', 'Cairn calendars hold to-dos (VTODO) only.');
    }
    if (extended) {
      const rt = child(prop, NS.D, 'resourcetype');
      if (rt && !child(rt, NS.C, 'calendar')) throw new DavError(403, 'Only calendars can be made here.');
    }
  }
  await write(r, () => {
    try {
      createContainer(deps, p, { kind: 'project', name, colorHex, id: path.collection.toUpperCase() });
    } catch (e) {
      if (e instanceof AppError && (e.problemCode === 'duplicate_id' || e.problemCode === 'conflict')) throw new DavError(405, 'This id is taken.');
      throw e;
    }
  });
  r.res.statusCode = 201;
  r.res.setHeader('Content-Length', '0');
  r.res.end();
}
