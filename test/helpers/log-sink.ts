// A writable stream that keeps every log line written to it, for tests that read what was logged.
import { Writable } from 'node:stream';

export function logSink(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      cb();
    },
  });
  return { lines, stream };
}
