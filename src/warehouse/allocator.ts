/**
 * chDB's allocator (the jemalloc inside libchdb.so) reads its options from
 * JE_MALLOC_CONF (not MALLOC_CONF) once, when the library loads: this module
 * must be imported before anything that imports `chdb`. Built in, it keeps
 * freed pages for 5 s (`dirty_decay_ms:5000`), and an import's statements
 * free and take hundreds of MB a second, so most of the process's RSS growth
 * during an import was freed memory not yet returned. Returning it after 1 s
 * cut the RSS growth of the import's pass over a 10M-request file by 50–90
 * MB for about 6 % more of its CPU, side by side in `npm run bench:import`;
 * 0 s cut more but cost 65 %.
 * An operator's own JE_MALLOC_CONF is left as given.
 */
const CHDB_ALLOCATOR_OPTIONS = 'dirty_decay_ms:1000';

process.env.JE_MALLOC_CONF ??= CHDB_ALLOCATOR_OPTIONS;
