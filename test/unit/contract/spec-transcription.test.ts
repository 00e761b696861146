import { EXPECTED_SCHEMAS, readSpec } from '../../integration/contract/spec-meta';

/**
 * The meta transcription (test/integration/contract/spec-meta.ts) against the spec it was transcribed from: every cube
 * is one of section 2.4, with its title, and every measure and dimension is named in that cube's part of it (as
 * `Cube.member` or, abbreviated, `member`; LinksAdvancedAnalytics and LinksDashboard share one part). Conventions the
 * spec leaves open (titles of members, drill groups) are the transcription's own and not checked here.
 */
const spec = readSpec();
const section = spec.slice(spec.indexOf('### 2.4'), spec.indexOf('\n### ', spec.indexOf('### 2.4') + 1));

/** The part of section 2.4 from the line that names the cube in bold to the next such line. */
function partOf(name: string): string {
  const start = section.lastIndexOf('\n', section.indexOf(`**${name}**`));
  if (section.indexOf(`**${name}**`) === -1) return '';
  const next = section.indexOf('\n**', start + 1);
  return section.slice(start + 1, next === -1 ? undefined : next);
}

describe.each(EXPECTED_SCHEMAS.map((schema) => [schema.name, schema] as const))('%s', (name, schema) => {
  const part = partOf(name);

  it('is a cube of section 2.4, with its title', () => {
    expect(part.split('\n')[0]).toContain(schema.title);
  });

  it('has only members the spec names for it', () => {
    const members = [...schema.measures, ...schema.dimensions].map((m) => m.name.slice(name.length + 1));
    expect(members.filter((member) => !new RegExp(`(^|[\\s.,|(])${member}\\b`, 'm').test(part))).toEqual([]);
  });
});
