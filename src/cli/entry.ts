// Process entry of the `portcullis` command (bin/portcullis.js loads the compiled copy).
import { main } from './main.js';

process.exitCode = await main(process.argv.slice(2));
