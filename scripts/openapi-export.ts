// `npm run openapi [-- <file>]` (issue 28 item 11): the OpenAPI 3.1 document a server serves at
// /openapi.json, without starting one (no data directory, no database, no master key): written
// to stdout, or to <file> when one is given. Its base URL is PUBLIC_URL's, read as the server
// reads it (core/config.ts: PUBLIC_URL, else http://localhost:$PORT), so the export matches the
// server it documents. Exit 0 when written; 1 with one line on stderr when the environment or
// the file is wrong.
import { writeFileSync } from 'node:fs';
import { ConfigError, loadConfig } from '../core/config.js';
import { buildOpenApiDocument } from '../rest/openapi.js';

const USAGE = 'usage: npm run openapi [-- <file>]   (stdout when no file is given)';

function main(argv: string[]): number {
  if (argv.length > 1 || argv[0]?.startsWith('-')) {
    process.stderr.write(`${USAGE}\n`);
    return argv[0] === '--help' || argv[0] === '-h' ? 0 : 1;
  }
  let publicUrl: string;
  try {
    publicUrl = loadConfig().publicUrl;
  } catch (e) {
    if (!(e instanceof ConfigError)) throw e;
    process.stderr.write(`openapi: ${e.message}\n`);
    return 1;
  }
  const doc = buildOpenApiDocument(publicUrl);
  const text = `${JSON.stringify(doc, null, 2)}\n`;
  const file = argv[0];
  if (!file) {
    process.stdout.write(text);
    return 0;
  }
  try {
    writeFileSync(file, text);
  } catch (e) {
    process.stderr.write(`openapi: cannot write ${file}: ${(e as Error).message}\n`);
    return 1;
  }
  process.stderr.write(`openapi: wrote ${file} (${Object.keys(doc.paths ?? {}).length} paths)\n`);
  return 0;
}

process.exitCode = main(process.argv.slice(2));
