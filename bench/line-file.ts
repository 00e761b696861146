import { createWriteStream } from 'node:fs';
import { once } from 'node:events';

/** A generated file written a megabyte of lines at a time, waiting for the stream to drain: line by line, a big file's writes cost more than its making. */
export function lineFile(file: string): { line(text: string): Promise<void>; close(): Promise<void> } {
  const out = createWriteStream(file);
  let batch = '';
  const flush = async () => {
    if (!out.write(batch)) await once(out, 'drain');
    batch = '';
  };
  return {
    async line(text) {
      batch += `${text}\n`;
      if (batch.length > 1 << 20) await flush();
    },
    async close() {
      await flush();
      out.end();
      await once(out, 'finish');
    },
  };
}
