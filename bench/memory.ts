import { mb, table } from './report';

const SAMPLE_MS = 100;

/**
 * Samples RSS from construction to stop(), so peaks include chDB's memory
 * while queries run (chDB runs in this process). mark() starts a new phase;
 * each phase reports its own peak.
 */
export class MemoryWatch {
  readonly before = process.memoryUsage();
  after: NodeJS.MemoryUsage | undefined;
  private readonly phases: { name: string; peakRss: number }[] = [{ name: 'load', peakRss: this.before.rss }];
  private readonly timer = setInterval(() => this.sample(), SAMPLE_MS);

  private sample(): void {
    const phase = this.phases[this.phases.length - 1];
    phase.peakRss = Math.max(phase.peakRss, process.memoryUsage.rss());
  }

  mark(name: string): void {
    this.sample();
    this.phases.push({ name, peakRss: process.memoryUsage.rss() });
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
    this.after = process.memoryUsage();
  }

  /** The peak RSS of a phase named in mark(), once measured. */
  peakOf(name: string): number | undefined {
    return this.phases.find((p) => p.name === name)?.peakRss;
  }

  table(): string {
    return table(
      ['Memory', 'RSS MB', 'Heap used MB'],
      ['l', 'r', 'r'],
      [
        ['before load', mb(this.before.rss), mb(this.before.heapUsed)],
        ...this.phases.map((p) => [`peak during ${p.name} (sampled every ${SAMPLE_MS} ms)`, mb(p.peakRss), '']),
        ['after load', mb(this.after?.rss), mb(this.after?.heapUsed)],
      ],
    );
  }
}
