import { jsonInSlices, type JsonPieces } from '../json-slices';

/**
 * A load's answer as it leaves Cube's side: its body (the spec's shape on
 * /v1, Cube's own on /cubejs-api/v1), whether the row limit left rows out of
 * any of its queries (truncation.ts: Cube answers a cut result like a whole
 * one), and its JSON, made once a slice of rows at a time (src/json-slices.ts):
 * the result cache measures an answer by it and the route sends it, a cached
 * answer again as it is. Answers are not changed once made.
 */
export class LoadAnswer<B extends object = object> {
  private text?: Promise<JsonPieces>;

  constructor(
    readonly body: B,
    readonly truncated: boolean,
  ) {}

  json(): Promise<JsonPieces> {
    this.text ??= jsonInSlices(this.body);
    return this.text;
  }
}
