// A refusal of the CalDAV door: an HTTP status, a detail, and optionally the WebDAV/CalDAV
// precondition it names (answered as `<D:error>` by dav/errors.ts).
import { NS, type QName } from './names.js';

export class DavError extends Error {
  constructor(
    readonly status: number,
    readonly detail: string,
    readonly condition?: QName,
    readonly headers: Record<string, string> = {},
  ) {
    super(detail);
    this.name = 'DavError';
  }
}

export const precondition = (status: number, ns: string, name: string, detail: string) => new DavError(status, detail, { ns, name });
export const calPrecondition = (status: number, name: string, detail: string) => precondition(status, NS.C, name, detail);
