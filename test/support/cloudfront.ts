/** CloudFront standard logs as AWS documents them, for the tests that write one. */

/** The fields of a CloudFront standard log, in the order AWS lists them. */
export const CLOUDFRONT_FIELDS = [
  'date',
  'time',
  'x-edge-location',
  'sc-bytes',
  'c-ip',
  'cs-method',
  'cs(Host)',
  'cs-uri-stem',
  'sc-status',
  'cs(Referer)',
  'cs(User-Agent)',
  'cs-uri-query',
  'cs(Cookie)',
  'x-edge-result-type',
  'x-edge-request-id',
  'x-host-header',
  'cs-protocol',
  'cs-bytes',
  'time-taken',
  'x-forwarded-for',
  'ssl-protocol',
  'ssl-cipher',
  'x-edge-response-result-type',
  'cs-protocol-version',
  'fle-status',
  'fle-encrypted-fields',
  'c-port',
  'time-to-first-byte',
  'x-edge-detailed-result-type',
  'sc-content-type',
  'sc-content-len',
  'sc-range-start',
  'sc-range-end',
];

/**
 * A value as AWS documents CloudFront writes it into a standard log ("Contain URL-encoded equivalents for spaces and
 * certain other characters in field values"): the bytes 0–32 and 127 and over, and < > " # % { } | \ ^ ~ [ ] ` ',
 * as %XX; `-` for an empty value.
 */
export function cloudFrontField(value: string): string {
  if (value === '') return '-';
  const listed = new Set([...'<>"#%{}|\\^~[]`\''].map((c) => c.charCodeAt(0)));
  return [...Buffer.from(value, 'utf8')]
    .map((b) => (b <= 32 || b >= 127 || listed.has(b) ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b)))
    .join('');
}
