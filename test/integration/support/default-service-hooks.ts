import { closeDefaultService } from './default-service';

/**
 * Registered in jest.config.js's setupFilesAfterEnv, so the hook is the jest
 * file's own, not one suite's: the shared default service (default-service.ts)
 * closes after the file's last test.
 */
afterAll(closeDefaultService);
