import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * No tracked file names a place on one machine: the workplace (`/work/…`), a named temporary directory (`/tmp/<name>`,
 * macOS's `/var/folders/…`), a home (`/root/…`, `/home/<name>/…`, `/Users/<name>/…`). Code makes its temporary
 * directories with os.tmpdir(); docs write placeholders (`<data-dir>`) and paths from the repository
 * (`../shared/spec/…`). Paths that mean the same on every machine stay: `/usr/bin/time`, `/proc/<pid>/status`,
 * `/dev/null`, an operator's example `/etc/analytics/api-keys.json`. A path inside a URL or after a relative one
 * (`https://host/tmp/x`, `../tmp/x`, `~/tmp`) is none of these.
 */
const ROOT = path.resolve(__dirname, '..', '..', '..');
const MACHINE_PATH = /(?<![\w.~:/-])\/(?:(?:work|root|var\/folders)\/|tmp\/[\w.<-]|(?:home|Users)\/[\w.-])/;

/** Tracked files that are text, but this one, whose examples of the rule name such paths. */
function trackedTextFiles(): string[] {
  const files = execFileSync('git', ['ls-files', '-z'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  const self = path.relative(ROOT, __filename).split(path.sep).join('/');
  return files.filter((file) => file !== self && !readFileSync(path.join(ROOT, file)).subarray(0, 8000).includes(0));
}

describe('tracked files', () => {
  it('name no absolute path of one machine', () => {
    const found = trackedTextFiles().flatMap((file) =>
      readFileSync(path.join(ROOT, file), 'utf8')
        .split('\n')
        .flatMap((line, i) => (MACHINE_PATH.test(line) ? [`${file}:${i + 1}: ${line.trim()}`] : [])),
    );
    expect(found).toEqual([]);
  });

  it.each([
    ['the workplace', 'see /work/shared/spec/x.txt', true],
    ['a named temporary directory', '`--data-dir /tmp/h21d-s1`', true],
    ['a temporary file of a tool', 'TMPDIR=/tmp/h17c-tmp node', true],
    ["root's home", 'cache in /root/.npm', true],
    ['a home', 'cd /home/alice/repo', true],
    ['a macOS home', '/Users/alice/repo', true],
    ["macOS's temporary directories", '/var/folders/xy/T/x', true],
    ['a placeholder', '`--data-dir <data-dir>`', false],
    ['a path from the repository', '../shared/spec/x.txt', false],
    ['a URL', 'https://example.com/work/tmp/x', false],
    ['a system tool', '/usr/bin/time -v node', false],
    ['the word /tmp alone', 'left over a thousand directories in /tmp (601 of them)', false],
    ["an operator's example", 'API_KEYS_FILE=/etc/analytics/api-keys.json', false],
  ])('the rule: %s', (_what, text, named) => {
    expect(MACHINE_PATH.test(text)).toBe(named);
  });
});
