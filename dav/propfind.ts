// PROPFIND (RFC 4918 §9.1) on the root, the principal (= calendar home), a calendar or a to-do.
// Depth 0 or 1 (absent = 0); `infinity` is refused with 403 `<D:propfind-finite-depth/>`. Every
// requested property is answered, unknown ones in a 404 propstat. A calendar's Depth 1 lists its
// members from plaintext relations and ETags (dav/store.ts): no to-do is opened unless
// calendar-data is asked for.
import { DavError, precondition } from './errors.js';
import { ALLPROP, collectionProps, homeProps, itemProps, rootProps, type PropSource } from './props.js';
import { ROOT, collectionHref, homeHref, itemHref } from './paths.js';
import { findByName, findCollection, listCollections, listMembers } from './store.js';
import { ownPath, sendMultistatus, type DavRequest } from './request.js';
import { NS, child, children, is, parseXml, propResponse, qnameOf, type QName } from './xml.js';

export type PropRequest = { kind: 'props'; props: QName[] } | { kind: 'allprop' } | { kind: 'propname' };

/** The `<D:prop>` / `<D:allprop>` / `<D:propname>` of a PROPFIND or REPORT body element. */
export function propRequestOf(el: ReturnType<typeof parseXml>): PropRequest {
  if (!el) return { kind: 'allprop' };
  const prop = child(el, NS.D, 'prop');
  if (prop) return { kind: 'props', props: children(prop).map(qnameOf) };
  if (child(el, NS.D, 'propname')) return { kind: 'propname' };
  return { kind: 'allprop' };
}

/** One resource's `<D:response>` for a property request. */
export function answer(href: string, source: PropSource, request: PropRequest, allprop: QName[]): string {
  if (request.kind === 'propname') return propResponse(href, allprop.map((q) => [q, ''] as [QName, string]), []);
  const names = request.kind === 'props' ? request.props : allprop;
  const found: [QName, string][] = [];
  const missing: QName[] = [];
  for (const q of names) {
    const v = source(q);
    if (v === undefined) missing.push(q);
    else found.push([q, v]);
  }
  return propResponse(href, found, request.kind === 'allprop' ? [] : missing);
}

export function depthOf(r: DavRequest): 0 | 1 {
  const d = String(r.req.headers.depth ?? '0').trim().toLowerCase();
  if (d === 'infinity') throw precondition(403, NS.D, 'propfind-finite-depth', 'Depth: infinity is not supported; use 0 or 1.');
  if (d === '1') return 1;
  if (d === '0') return 0;
  throw new DavError(400, 'Depth must be 0 or 1.');
}

export async function propfind(r: DavRequest): Promise<void> {
  const depth = depthOf(r);
  const body = parseXml(r.body);
  if (body && !is(body, NS.D, 'propfind')) throw new DavError(400, 'A PROPFIND body is a <D:propfind> element.');
  const request = propRequestOf(body);
  ownPath(r);
  const { deps, p, path } = r;
  const items: string[] = [];
  switch (path.kind) {
    case 'root': {
      items.push(answer(ROOT, rootProps(p), request, ALLPROP.principal));
      if (depth === 1) items.push(answer(homeHref(p.userId), homeProps(p), request, ALLPROP.principal));
      return sendMultistatus(r.res, items);
    }
    case 'home': {
      items.push(answer(homeHref(p.userId), homeProps(p), request, ALLPROP.principal));
      if (depth === 1) for (const c of listCollections(deps, p)) items.push(answer(collectionHref(p.userId, c.id), collectionProps(deps, p, c), request, ALLPROP.collection));
      return sendMultistatus(r.res, items);
    }
    case 'collection': {
      const c = findCollection(deps, p, path.collection);
      if (!c) throw new DavError(404, 'No calendar has this path.');
      const members = listMembers(deps, p, c.id);
      const head = answer(collectionHref(p.userId, c.id), collectionProps(deps, p, c, () => members), request, ALLPROP.collection);
      if (depth === 0) return sendMultistatus(r.res, [head]);
      function* all() {
        yield head;
        for (const m of members) yield answer(itemHref(p.userId, c!.id, m.name), itemProps(deps, p, m), request, ALLPROP.item);
      }
      return sendMultistatus(r.res, all());
    }
    case 'item': {
      const c = findCollection(deps, p, path.collection);
      const res = c && findByName(deps, p, c.id, path.name);
      if (!c || !res) throw new DavError(404, 'No to-do has this path.');
      return sendMultistatus(r.res, [answer(itemHref(p.userId, c.id, res.name), itemProps(deps, p, res), request, ALLPROP.item)]);
    }
  }
}
