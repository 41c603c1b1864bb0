// Preloaded with NODE_OPTIONS="--import …/record-loads.mjs" and CAIRN_TEST_RECORD_LOADS=<file>:
// appends every module the process resolves (ESM through a resolve hook, CommonJS through
// Module._load) to the file, one per line, so a test can tell what a server has loaded.
import { appendFileSync } from 'node:fs';
import Module, { register } from 'node:module';

const file = process.env.CAIRN_TEST_RECORD_LOADS;
if (file) {
  register('./record-loads-hooks.mjs', import.meta.url, { data: { file } });
  const load = Module._load;
  Module._load = function (request, parent, isMain) {
    appendFileSync(file, `cjs:${request}\n`);
    return load.call(this, request, parent, isMain);
  };
}
