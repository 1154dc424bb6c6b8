#!/usr/bin/env node
// The `cairn` command: runs the built CLI (npm ci builds it through the prepare script).
import '../dist/cli.js';
