import { frameworkSuite } from './matrix-suite.ts';

frameworkSuite('openai-v2');
