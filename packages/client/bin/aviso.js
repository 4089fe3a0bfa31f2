#!/usr/bin/env node
// The `aviso` bin. A file of its own, present before any build, so `npm ci` links it into
// node_modules/.bin on a fresh clone (npm links no bin whose target is missing); the command
// itself is the compiled dist/cli/main.js.
import '../dist/cli/main.js';
