// OPTIONS (RFC 4918 §10.1, RFC 4791 §5.1): what the server speaks. Answered without credentials,
// as clients probe before they authenticate.
import type { ServerResponse } from 'node:http';

export const METHODS = 'OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, REPORT, MKCALENDAR, MKCOL, MOVE';

export function options(res: ServerResponse): void {
  res.statusCode = 200;
  res.setHeader('DAV', '1, 3, calendar-access');
  res.setHeader('Allow', METHODS);
  res.setHeader('Content-Length', '0');
  res.end();
}
