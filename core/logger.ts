// Structured JSON logs (pino). Redaction is a second line of defence: code never passes secrets
// or content to the logger in the first place.
import { pino, type Logger } from 'pino';

/** Bytes of log lines that may wait for a stalled stdout before further lines are dropped. */
export const STDOUT_BACKLOG_BYTES = 1024 * 1024;

const QUIETED = new WeakSet<object>();

/**
 * Issue 11.9: a log destination that can never block the process. pino's default destination
 * writes stdout synchronously and, on a pipe or socket whose reader stalls, retries EAGAIN in a
 * busy wait forever (a server that hung in exit for 40 minutes). Here lines go through
 * process.stdout, which is asynchronous on pipes and sockets; while more than `maxBacklog` bytes
 * wait, further lines are dropped (and counted) rather than buffered without bound. Lines still
 * waiting when the process exits are lost; the process is not held for them.
 */
export function nonBlockingStdout(stream: NodeJS.WritableStream & { writableLength?: number } = process.stdout, maxBacklog = STDOUT_BACKLOG_BYTES) {
  let dropped = 0;
  // A closed reader (EPIPE) is not a reason to crash the server (one listener per stream).
  if (!QUIETED.has(stream)) {
    QUIETED.add(stream);
    stream.on('error', () => {});
  }
  return {
    write(line: string): void {
      if ((stream.writableLength ?? 0) > maxBacklog) {
        dropped++;
        return;
      }
      if (dropped) {
        stream.write(`{"level":40,"service":"cairn","msg":"log lines dropped: stdout stalled","dropped":${dropped}}\n`);
        dropped = 0;
      }
      stream.write(line);
    },
  };
}

export function createLogger(level: string, destination?: NodeJS.WritableStream): Logger {
  return pino(
    {
      level,
      base: { service: 'cairn' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: ['authorization', 'req.headers.authorization', 'headers.authorization', 'password', '*.password', 'token', '*.token', 'secret', '*.secret'],
        censor: '[redacted]',
      },
    },
    (destination ?? nonBlockingStdout()) as pino.DestinationStream,
  );
}

/**
 * The access log's own logger (issue 12, server/handler.ts): the same destination and level, no
 * redaction pass. The access line is built by the handler from fields it picks (request id,
 * method, path without query, procedure, status, duration), never from headers, bodies or query
 * strings, so there is nothing to redact, and the pass cost ~5 µs a request. Every other line
 * keeps the redaction.
 */
export function accessLogger(log: Logger): Logger {
  return log.child({}, { redact: { paths: [] } });
}
