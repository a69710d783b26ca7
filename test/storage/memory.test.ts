import { MemoryStorage } from '../../src/storage/memory.js';
import { storageSuite } from './suite.js';

storageSuite('memory', async () => new MemoryStorage());
