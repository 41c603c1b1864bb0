// XML namespaces and qualified names of the CalDAV door (shared by dav/xml.ts and dav/dav-error.ts).
export const NS = {
  D: 'DAV:',
  C: 'urn:ietf:params:xml:ns:caldav',
  CS: 'http://calendarserver.org/ns/',
  A: 'http://apple.com/ns/ical/',
} as const;

export type QName = { ns: string; name: string };
