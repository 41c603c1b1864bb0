// Structured JSON logs (pino). Redaction is a second line of defence: code never passes secrets
// or content to the logger in the first place.
import { pino, type Logger } from 'pino';

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
    destination as pino.DestinationStream | undefined,
  );
}
