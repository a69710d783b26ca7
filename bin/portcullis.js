#!/usr/bin/env node
// The `portcullis` command. The TypeScript sources are compiled to dist/ by `npm ci` (the
// `prepare` script); run `npm run build` after changing them.
import '../dist/cli/entry.js';
