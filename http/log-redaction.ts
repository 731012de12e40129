// Paths pino blanks out wherever they appear in a log line: the headers that carry keys, and the
// fields that hold a new key or its hash. Nothing logs them today; this keeps a future debug line (a
// logged request, an error carrying one) from writing a secret to the logs.

export const REDACTED_LOG_PATHS = [
  'req.headers["x-svc-key"]',
  'req.headers["x-blnk-key"]',
  'req.headers.authorization',
  'headers["x-svc-key"]',
  'headers["x-blnk-key"]',
  'headers.authorization',
  'headers["x-folio-signature"]',
  'key',
  'secret_key',
  'secret_hash',
  '*.key',
  '*.secret_key',
  '*.secret_hash',
];
