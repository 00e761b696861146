import { get } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

/** One metric family as parse-prometheus-text-format gives it (prom2json's shape). */
interface Family {
  name: string;
  type: string;
  metrics: { labels?: Record<string, string>; value?: string; count?: string; sum?: string }[];
}

/** A parsed scrape: the value of one sample (a histogram's count) by name and labels, 0 when absent. */
export interface Scrape {
  /** Metric families by name, a histogram's `_bucket`, `_sum` and `_count` series each as a family of its own. */
  families: Map<string, Family>;
  /** Names declared `# TYPE … histogram`. */
  histograms: Set<string>;
  value(name: string, labels?: Record<string, string>): number;
}

export function parseScrape(text: string): Scrape {
  const histograms = new Set([...text.matchAll(/^# TYPE (\S+) histogram$/gm)].map((match) => match[1]));
  // parse-prometheus-text-format 1.1.1 merges all series of a labelled
  // histogram into one and drops their labels (its flattenMetrics), so the
  // histograms' series are parsed as untyped samples, each keeping its labels.
  // prom-client interleaves a histogram's series (buckets, sum, count of one
  // label set, then the next), which the parser returns as several families
  // of one name; they are merged again here.
  const untyped = text.replace(/^# TYPE (\S+) histogram$/gm, '# TYPE $1 untyped');
  const families = new Map<string, Family>();
  for (const family of parsePrometheusTextFormat(untyped) as Family[]) {
    const seen = families.get(family.name);
    if (seen) seen.metrics.push(...family.metrics);
    else families.set(family.name, family);
  }
  return {
    families,
    histograms,
    value(name, labels = {}) {
      const family = families.get(histograms.has(name) ? `${name}_count` : name);
      const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
      return sample ? Number(sample.value) : 0;
    },
  };
}

/** GET over a real socket: status and body. */
export function httpGet(url: string): Promise<{ status: number; body: string; contentType?: string }> {
  return new Promise((resolve, reject) => {
    get(url, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, contentType: res.headers['content-type'] }));
    }).on('error', reject);
  });
}

/** A TCP port nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}
