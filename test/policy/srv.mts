import { startEngine } from './helpers.js';
const e = await startEngine();
process.stdout.write(e.url + '\n');
