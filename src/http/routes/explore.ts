import path from 'node:path';
import express, { type Router } from 'express';

/**
 * The page's files live in public/explorer at the repository's root, which is
 * three levels up from both src/http/routes (ts-jest) and dist/http/routes
 * (npm start): no build step copies them.
 */
export const EXPLORER_DIR = path.resolve(__dirname, '..', '..', '..', 'public', 'explorer');

/** GET /explore: the query explorer, plain files that need no key (the page asks for one and calls the API). */
export function exploreRoute(): Router {
  const router = express.Router();
  router.get('/', (_req, res) => res.sendFile(path.join(EXPLORER_DIR, 'index.html')));
  router.use(express.static(EXPLORER_DIR, { index: false, redirect: false }));
  return router;
}
