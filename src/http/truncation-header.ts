import type { Response } from 'express';
import { wasTruncated } from '../cube/truncation';

/** The header that says whether the row limit left rows out of an answer (any query of a multi answer). */
export const TRUNCATED_HEADER = 'Result-Truncated';

/** A load answer as JSON, with Result-Truncated: the body keeps its documented shape. */
export function sendLoadAnswer(res: Response, answer: object): void {
  const truncated = wasTruncated(answer);
  if (truncated !== undefined) res.setHeader(TRUNCATED_HEADER, String(truncated));
  res.json(answer);
}
